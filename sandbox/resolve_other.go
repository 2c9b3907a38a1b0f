//go:build unix && !linux

package sandbox

import "path/filepath"

// evalSymlinks is filepath.EvalSymlinks.
func evalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }
