package sandbox

// mounts says how a start that must protect paths (needed) gets its
// mount namespace: on the restricted thread (false), or in the trampoline
// started in a user namespace of its own (true). Where neither works the
// run fails closed: it never runs with .git writable.
func (s support) mounts(needed bool) (inUserns bool, err error) {
	switch {
	case !needed || s.threadMounts:
		return false, nil
	case s.usernsMounts:
		return true, nil
	}
	return false, &UnavailableError{Reason: "no mount namespace can be made here, so what programs outside the sandbox execute " +
		"(.git, .basis, .mcp.json, the protected paths) cannot be kept read-only inside the writable directories"}
}

// probeMounts records whether this process may make a mount namespace on
// a thread (root; threadMounts, from the probe thread), or else the
// trampoline, started in a user namespace of its own, may: wherever the
// trampoline gets a user namespace for the network, it holds
// CAP_SYS_ADMIN there, which is what a mount namespace needs. Where
// something else forbids it still (an LSM's rule on user namespaces), the
// trampoline fails the run closed.
func probeMounts(s *support, threadMounts bool) {
	s.threadMounts = threadMounts
	s.usernsMounts = !s.threadMounts && s.netns && s.userns && mainCalled.Load()
}
