//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package terminal

// discardTypeahead is not available here; typed-ahead keys stay.
func discardTypeahead(int) error { return nil }
