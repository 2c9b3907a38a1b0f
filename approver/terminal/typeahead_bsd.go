//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import "golang.org/x/sys/unix"

// discardTypeahead drops input the terminal received but nobody has read.
// FREAD (1) selects the input queue; x/sys does not name it.
func discardTypeahead(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) }
