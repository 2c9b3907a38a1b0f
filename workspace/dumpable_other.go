//go:build unix && !linux

package workspace

// forbidInspection does nothing where there is no PR_SET_DUMPABLE; other
// systems guard a process's environment in their own ways (macOS allows
// only root to read another process's environment).
func forbidInspection() error { return nil }
