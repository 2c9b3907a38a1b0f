//go:build unix

package sandbox

import "sync"

// support is what this machine offers, probed once per process.
type support struct {
	// abi is the Landlock ABI version; 0 when Landlock is unavailable.
	abi int
	// netns: a child can be started in a new network namespace.
	netns bool
	// pidns: a child can be started as the first process of a new PID
	// namespace.
	pidns bool
	// threadNetns: this process may move one of its threads into a new
	// network namespace and start children in new PID namespaces (it is
	// privileged), so no re-execution is needed.
	threadNetns bool
	// userns: the namespaces need a user namespace too (not privileged),
	// made when the trampoline is cloned.
	userns bool
	// threadMounts: this process may make a mount namespace on one of its
	// threads (it is privileged), to hold protected paths read-only.
	threadMounts bool
	// usernsMounts: the trampoline, started in a user namespace of its
	// own, may make one.
	usernsMounts bool
	// helper: the sandbox helper beside the running binary made the
	// namespaces (see [HelperName]); the running binary is re-executed
	// otherwise.
	helper bool
	// why says why Landlock is unavailable, when it is.
	why string
}

var (
	probeOnce sync.Once
	probed    support
	// probeSupport finds what the kernel offers; tests replace it to
	// simulate another kernel.
	probeSupport = probeKernel
)

func probe() support {
	probeOnce.Do(func() { probed = probeSupport() })
	return probed
}

func (s support) cut() NetworkCut {
	switch {
	case s.netns:
		return CutNamespace
	case s.abi >= 4:
		return CutLandlockTCP
	}
	return CutUnavailable
}

func (s support) check(network bool) error {
	if s.abi < 1 {
		return &UnavailableError{Reason: s.why}
	}
	if !network && s.cut() == CutUnavailable {
		return &UnavailableError{Reason: "no network namespace can be created here and Landlock is older than ABI 4, so the network cannot be cut"}
	}
	return nil
}
