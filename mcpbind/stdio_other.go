//go:build unix && !linux

package mcpbind

import "syscall"

// dieWithParent does nothing: only Linux lets a parent ask for its child's
// death when it dies.
func dieWithParent(*syscall.SysProcAttr) {}
