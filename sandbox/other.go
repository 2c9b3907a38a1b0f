//go:build unix && !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// Main does nothing on this system: there is no trampoline to run.
func Main() {}

// Warm does nothing on this system: nothing is confined.
func Warm(Policy) {}

// HelperStatus reports that no sandbox helper is needed here: there is
// no sandbox to start one for.
func HelperStatus() (path string, err error) { return "", nil }

// Prepare fails closed on this system unless the policy is Off: only
// Linux can confine a program.
func (s *Sandbox) Prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	if s.policy.Mode == Off {
		return cmd.Start, func() {}, nil
	}
	return nil, nil, &UnavailableError{Reason: "the sandbox needs Linux (Landlock); this is " + runtime.GOOS}
}

func probeKernel() support {
	return support{why: "the sandbox needs Linux (Landlock); this is " + runtime.GOOS}
}

// PrepareCommand fails closed on this system unless the policy is Off.
func (s *Sandbox) PrepareCommand(cmd *exec.Cmd) (release func(), err error) {
	_, release, err = s.Prepare(cmd)
	return release, err
}
