//go:build unix

package workspace

import "golang.org/x/sys/unix"

// forbidInspection marks basis non-dumpable: its /proc/<pid>/environ, mem,
// maps and fds become readable only by root (more exactly, by a process
// with CAP_SYS_PTRACE), and a process of the same user can no longer
// ptrace it. basis's environment holds every credential its manifests
// pass on to their own tools; without this, any command basis starts could
// read them all with `tr '\0' '\n' < /proc/$PPID/environ`.
//
// It does not cover: root or CAP_SYS_PTRACE holders; what basis itself
// hands a child (the child's own environment, argv in /proc/<pid>/cmdline,
// which every local user can read); core dumps being off is a side effect.
// A set-uid or file-capability exec would reset it, but basis execs none.
func forbidInspection() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
