package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
	// Protect lists what is mounted read-only, in a mount namespace of
	// the program's own, before it runs.
	Protect []string `json:"protect,omitempty"`
}

const specVersion = 1

// Prepare readies cmd, a command about to be started, to run confined,
// and returns the function that starts it (use it instead of cmd.Start;
// it is never nil on success) and release, which removes the per-call
// temporary directory and must be called once the program and everything
// it started are done. Prepare has the signature of subprocess.Cmd's
// Confine hook, which does all of that.
//
// The environment's TMPDIR becomes a fresh per-call directory. Where this
// process may create a network namespace itself (root), start restricts a
// dedicated OS thread — new network namespace with loopback up, dangerous
// capabilities dropped, Landlock — and starts the program from it, so the
// program inherits all of it. Otherwise, when the network must be cut with
// a user namespace, cmd is rewritten into a re-execution of this binary
// that [Main] turns into the same steps before executing the program.
//
// Prepare fails, and nothing must be started, when this machine cannot
// confine the program ([ErrUnavailable]). Off returns cmd.Start unchanged.
func (s *Sandbox) Prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	return s.prepare(cmd, false)
}

// PrepareCommand is Prepare for a command that something else starts
// with cmd.Start — the MCP SDK's CommandTransport, say: it always rewrites
// cmd into the re-execution of this binary that [Main] confines, so it
// needs Main ([ErrNoTrampoline] otherwise) and costs one more exec.
// Release as for Prepare, once the program is done.
func (s *Sandbox) PrepareCommand(cmd *exec.Cmd) (release func(), err error) {
	_, release, err = s.prepare(cmd, true)
	return release, err
}

func (s *Sandbox) prepare(cmd *exec.Cmd, rewrite bool) (start func() error, release func(), err error) {
	if s.policy.Mode == Off {
		return cmd.Start, func() {}, nil
	}
	sup := probe()
	if err := sup.check(s.policy.Network); err != nil {
		return nil, nil, err
	}
	if cmd.Path == "" || len(cmd.Args) == 0 {
		return nil, nil, fmt.Errorf("%w: the command has no program", ErrInvalidPolicy)
	}
	if cmd.Process != nil {
		return nil, nil, fmt.Errorf("%w: the command has already started", ErrInvalidPolicy)
	}
	sp := spec{Version: specVersion, Program: cmd.Path}
	if !s.policy.Network {
		sp.Net = sup.cut()
	}
	dir := s.absDir(cmd.Dir)
	if sp.Protect, err = s.protectedPaths(dir); err != nil {
		return nil, nil, err
	}
	mountsInUserns, err := sup.mounts(len(sp.Protect) > 0)
	if err != nil {
		return nil, nil, err
	}
	trampoline := rewrite || sp.Net == CutNamespace && !sup.threadNetns || mountsInUserns
	if trampoline && !mainCalled.Load() {
		return nil, nil, ErrNoTrampoline
	}
	tmp, err := os.MkdirTemp("", "basis-call-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: creating the per-call temporary directory: %w", err)
	}
	release = func() { _ = os.RemoveAll(tmp) }
	sp.Write = append([]string{tmp}, s.writable(dir)...)
	env := cmd.Env
	if env == nil {
		env = os.Environ() // what exec.Cmd would have given the program
	}
	vars := []string{"TMPDIR=" + tmp}
	if s.cacheDir != "" && s.policy.Mode == WorkspaceWrite {
		// A missing cache directory cannot be granted, and the first
		// `go build` would then fail to create it.
		_ = os.MkdirAll(s.cacheDir, 0o700)
		vars = append(vars, cacheEnv(s.cacheDir)...)
	}
	cmd.Env = withVars(env, vars...)
	if !trampoline {
		return startFromRestrictedThread(cmd, sp), release, nil
	}
	encoded, err := json.Marshal(sp)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("sandbox: encoding the policy: %w", err)
	}
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		c := *cmd.SysProcAttr
		attr = &c
	}
	if sp.Net == CutNamespace {
		withNetNamespace(attr, sup.userns)
	}
	if mountsInUserns {
		withMountNamespace(attr)
	}
	cmd.Args = append([]string{trampolineName, string(encoded)}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.SysProcAttr = attr
	return cmd.Start, release, nil
}

// startFromRestrictedThread returns a start function that confines a
// fresh OS thread as sp says and starts cmd from it: a child inherits the
// credentials (Landlock domain, capabilities, no_new_privs) and the
// network namespace of the thread that forks it. The thread is never
// unlocked, so the Go runtime ends it with its goroutine instead of
// reusing it for anything else.
func startFromRestrictedThread(cmd *exec.Cmd, sp spec) func() error {
	return func() error {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			if err := confineThread(sp); err != nil {
				done <- err
				return
			}
			done <- cmd.Start()
		}()
		return <-done
	}
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
// the trampoline in a new network namespace, and what mount namespaces
// need.
func probeKernel() support {
	s := probeNet()
	probeMounts(&s)
	return s
}

func probeNet() support {
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
	if s.abi < 1 {
		return s
	}
	s.threadNetns = threadCanUnshareNet()
	if s.threadNetns {
		s.netns = true
		return s
	}
	if !mainCalled.Load() {
		return s // the trampoline, which a user namespace needs, is not there
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

// sharedNet is the network namespace that confined starts from this
// process move their thread into: made once, loopback up, and held open.
// Creating a namespace costs about half a millisecond, entering one a few
// microseconds. Programs of different calls share its loopback; none of
// them can reach anything outside it.
var sharedNet struct {
	once sync.Once
	fd   int
	err  error
}

// sharedNetNamespace returns a descriptor of sharedNet, making it on first
// use on a throwaway thread (it fails for a process that may not create
// namespaces).
func sharedNetNamespace() (int, error) {
	sharedNet.once.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the thread ends here
			if sharedNet.err = unix.Unshare(unix.CLONE_NEWNET); sharedNet.err != nil {
				sharedNet.fd = -1
				return
			}
			_ = loopbackUp()
			sharedNet.fd, sharedNet.err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}()
		<-done
	})
	return sharedNet.fd, sharedNet.err
}

// threadCanUnshareNet reports whether a confined start can enter a
// network namespace without a re-execution.
func threadCanUnshareNet() bool {
	_, err := sharedNetNamespace()
	return err == nil
}
