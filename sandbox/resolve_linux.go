package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// evalSymlinks is filepath.EvalSymlinks, asking the kernel first whether
// an absolute, clean path has a symbolic link on the way at all: one
// openat2 with RESOLVE_NO_SYMLINKS, instead of an lstat per component,
// answers for the usual path with none (the workspace, basis's cache),
// which is then its own resolution. A path with a link, or a kernel
// without openat2, is resolved component by component as before.
func evalSymlinks(path string) (string, error) {
	if filepath.IsAbs(path) && path == filepath.Clean(path) {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS,
		})
		if err == nil {
			unix.Close(fd)
			return path, nil
		}
	}
	return filepath.EvalSymlinks(path)
}
