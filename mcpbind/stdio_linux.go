package mcpbind

import "syscall"

// dieWithParent has the kernel SIGKILL the server when the thread that
// started it ends, which for a Go program's ordinary thread is when the
// process dies (even by SIGKILL).
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
