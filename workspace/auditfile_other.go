//go:build unix && !linux

package workspace

import "golang.org/x/sys/unix"

// dirFlags opens a directory of the audit file's path.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC

// onProcfs reports whether dir is in a /proc of magic links; only Linux
// has one.
func onProcfs(int) bool { return false }
