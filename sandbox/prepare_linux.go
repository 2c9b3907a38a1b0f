package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// trampolineName is argv[0] of the re-executed binary: the mark [Main]
// looks for.
const trampolineName = "basis-sandbox"

// probeArg makes the trampoline exit at once: a start in a new network
// namespace, tried once, tells whether namespaces work here.
const probeArg = "probe"

// spec is what the trampoline is told, as JSON in its argv[1]. Its argv
// from 2 on is the program's own argv, argv[0] included.
type spec struct {
	Version int      `json:"v"`
	Program string   `json:"program"`
	Write   []string `json:"write"`
	// Net is "" (allowed), "namespace" or "landlock-tcp".
	Net NetworkCut `json:"net,omitempty"`
}

const specVersion = 1

// Prepare rewrites cmd, a command about to be started, so that it runs
// confined: cmd becomes a re-execution of this binary (see [Main]) that
// restricts itself and then executes the original program with the
// original arguments and environment. The environment's TMPDIR is set to
// a fresh per-call directory; release removes it and must be called once
// the program and everything it started are done (subprocess does).
//
// Prepare fails, and cmd must not be started, when this machine cannot
// confine the program ([ErrUnavailable]) or this binary does not call
// Main ([ErrNoTrampoline]). Off leaves cmd as it is.
func (s *Sandbox) Prepare(cmd *exec.Cmd) (release func(), err error) {
	if s.policy.Mode == Off {
		return func() {}, nil
	}
	sup := probe()
	if err := sup.check(s.policy.Network); err != nil {
		return nil, err
	}
	if !mainCalled.Load() {
		return nil, ErrNoTrampoline
	}
	if cmd.Path == "" || len(cmd.Args) == 0 {
		return nil, fmt.Errorf("%w: the command has no program", ErrInvalidPolicy)
	}
	if cmd.Process != nil {
		return nil, fmt.Errorf("%w: the command has already started", ErrInvalidPolicy)
	}
	dir := s.absDir(cmd.Dir)
	tmp, err := os.MkdirTemp("", "basis-call-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: creating the per-call temporary directory: %w", err)
	}
	release = func() { _ = os.RemoveAll(tmp) }
	sp := spec{Version: specVersion, Program: cmd.Path, Write: append([]string{tmp}, s.writable(dir)...)}
	if s.cacheDir != "" && s.policy.Mode == WorkspaceWrite {
		// A missing cache directory cannot be granted, and the first
		// `go build` would then fail to create it.
		_ = os.MkdirAll(s.cacheDir, 0o700)
	}
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	} else {
		c := *attr
		attr = &c
	}
	if !s.policy.Network {
		sp.Net = sup.cut()
		if sp.Net == CutNamespace {
			withNetNamespace(attr, sup.userns)
		}
	}
	encoded, err := json.Marshal(sp)
	if err != nil {
		release()
		return nil, fmt.Errorf("sandbox: encoding the policy: %w", err)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ() // what exec.Cmd would have given the program
	}
	cmd.Env = withTempDir(env, tmp)
	cmd.Args = append([]string{trampolineName, string(encoded)}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.SysProcAttr = attr
	return release, nil
}

// withTempDir sets TMPDIR, replacing every entry of that name.
func withTempDir(env []string, tmp string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "TMPDIR=") {
			out = append(out, e)
		}
	}
	return append(out, "TMPDIR="+tmp)
}

// withNetNamespace starts the trampoline in a new network namespace. An
// unprivileged process needs a user namespace for that: its own uid and
// gid map to themselves, and CAP_NET_ADMIN is kept across the exec so
// the trampoline can bring loopback up (it drops it before the program
// runs).
func withNetNamespace(attr *syscall.SysProcAttr, userns bool) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if !userns {
		return
	}
	uid, gid := os.Getuid(), os.Getgid()
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
}

// probeKernel asks the kernel for its Landlock ABI and tries one start of
// the trampoline in a new network namespace.
func probeKernel() support {
	var s support
	abi, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil:
		s.abi = abi
	case err == syscall.ENOSYS || err == syscall.EOPNOTSUPP:
		s.why = "this kernel has no Landlock (it is not built in, or not enabled with the lsm= boot parameter)"
	default:
		s.why = "Landlock cannot be queried: " + err.Error()
	}
	if s.abi < 1 || !mainCalled.Load() {
		return s
	}
	s.userns = os.Geteuid() != 0
	for _, userns := range []bool{s.userns, true} {
		attr := &syscall.SysProcAttr{}
		withNetNamespace(attr, userns)
		cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{trampolineName, probeArg}, Env: []string{}, SysProcAttr: attr}
		if cmd.Run() == nil {
			s.netns, s.userns = true, userns
			break
		}
	}
	return s
}
