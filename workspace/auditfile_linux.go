package workspace

import "golang.org/x/sys/unix"

// dirFlags opens a directory of the audit file's path: O_PATH needs no
// read permission, only search, as a path lookup does.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

// onProcfs reports whether the directory dir is in /proc, whose links
// are the kernel's own (magic links), not paths to walk.
func onProcfs(dir int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(dir, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}
