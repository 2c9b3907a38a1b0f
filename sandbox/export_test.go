//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// SimulateKernel makes the sandbox believe the kernel offers Landlock ABI
// abi and, with netns, network namespaces — made by starting the
// trampoline in one, as for an unprivileged process — until restore is
// called. Tests
// that use it must not run in parallel with other sandbox tests.
func SimulateKernel(abi int, netns bool, why string) (restore func()) {
	real := probe()
	probed = support{abi: abi, netns: netns, pidns: netns && real.pidns, userns: real.userns, why: why,
		threadMounts: real.threadMounts, usernsMounts: real.usernsMounts}
	return func() { probed = real }
}

// SimulateMissingMain makes Prepare behave as in a program that never
// called Main, until restore is called.
func SimulateMissingMain() (restore func()) {
	mainCalled.Store(false)
	return func() { mainCalled.Store(true) }
}

// GoOnChildlessThread is goOnChildlessThread.
var GoOnChildlessThread = goOnChildlessThread

// SimulateNoMountNamespaces makes the sandbox believe no mount namespace
// can be made here, until restore is called.
func SimulateNoMountNamespaces() (restore func()) {
	real := probe()
	probed.threadMounts, probed.usernsMounts = false, false
	return func() { probed = real }
}

func prctlNoNewPrivs() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }
