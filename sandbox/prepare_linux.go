package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// Prepare readies cmd, a command about to be started, to run confined,
// and returns the function that starts it (use it instead of cmd.Start;
// it is never nil on success) and release, which ends what is left of
// the program (see below) and removes the per-call temporary directory;
// call it once the program has been waited for. Prepare has the
// signature of subprocess.Cmd's Confine hook, which does all of that.
//
// The environment's TMPDIR becomes a directory of the call's own, empty
// and readable by this user alone. The
// program is the first process of a PID namespace of its own: when it
// exits, the kernel kills every process it left behind, whatever session
// or group they moved to; it gets SIGKILL when this process dies (the
// parent-death signal), and release kills it if it is still running.
// Where this process may create namespaces itself (root), start restricts
// a dedicated OS thread — the sandbox's network namespace with loopback
// up, dangerous capabilities dropped, Landlock — and starts the program
// from it, so the program inherits all of it; the thread lives at least
// until release, since the parent-death signal fires when the thread that
// started the program ends. From the second call of the same kind on (the
// same policy, directory and paths to protect), that thread and its
// TMPDIR are kept and used again, one call at a time: confining a thread
// was most of a sandboxed start's cost. Otherwise (an unprivileged user, whose
// namespaces need a user namespace made at clone time) cmd is rewritten
// into a re-execution of this binary that [Main] turns into the same
// steps before executing the program.
//
// Prepare fails, and nothing must be started, when this machine cannot
// confine the program ([ErrUnavailable]). Off returns cmd.Start unchanged.
//
// cmd.SysProcAttr is kept (Setsid, Setpgid, Setctty and the like apply to
// the program as usual); Prepare adds clone flags and sets Pdeathsig to
// SIGKILL. The program, as the first process of its namespace, ignores
// the signals it has no handler for, SIGKILL excepted: a SIGTERM to its
// process group reaches the rest of the group, and the program itself
// only if it handles it; a write to a closed pipe fails with EPIPE
// instead of killing it with SIGPIPE.
func (s *Sandbox) Prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	return s.prepare(cmd, false, "")
}

// PrepareCommand is Prepare for a command that something else starts
// with cmd.Start — the MCP SDK's CommandTransport, say: it always rewrites
// cmd into the re-execution of this binary that [Main] confines, so it
// needs Main ([ErrNoTrampoline] otherwise) and costs one more exec.
// Release as for Prepare, once the program is done. The program's
// parent-death signal fires when the thread that calls cmd.Start ends:
// call it from an ordinary goroutine (Go never ends those threads), or
// one locked to its thread until the program has exited.
func (s *Sandbox) PrepareCommand(cmd *exec.Cmd) (release func(), err error) {
	_, release, err = s.prepare(cmd, true, "")
	return release, err
}

// Warm does now what the first confined start of policy's kind in this
// process would otherwise do before its program runs: it probes the
// kernel (as [Check] does) and, where a thread of this process confines
// programs (a privileged process), opens the paths every ruleset names.
// A host calls it from a goroutine of its own as soon as it knows a
// program may start, so that the work overlaps its own setup; nothing
// requires it.
func Warm(policy Policy) {
	if policy.mode() == Off {
		return
	}
	if sup := probe(); sup.check(policy.Network) == nil && sup.threadNetns {
		holdRules(policy.LimitReads)
	}
}

// tag, when not "", names the thread that restricts itself for the
// program (see [Watch]).
func (s *Sandbox) prepare(cmd *exec.Cmd, rewrite bool, tag string) (start func() error, release func(), err error) {
	if s.policy.Mode == Off {
		return cmd.Start, func() {}, nil
	}
	sup := probe()
	if err := sup.check(s.policy.Network); err != nil {
		return nil, nil, err
	}
	if cmd.Path == "" || len(cmd.Args) == 0 {
		return nil, nil, fmt.Errorf("%w: the command has no program", errInvalidPolicy)
	}
	if cmd.Process != nil {
		return nil, nil, fmt.Errorf("%w: the command has already started", errInvalidPolicy)
	}
	sp := spec{Version: specVersion, Program: cmd.Path, Tag: tag}
	if !s.policy.Network {
		sp.Net = string(sup.cut())
	}
	dir := s.absDir(cmd.Dir)
	if s.policy.LimitReads {
		sp.LimitRead, sp.Read = true, append(s.readRoots(dir), cmd.Path)
	}
	if sp.Protect, err = s.protectedPaths(dir); err != nil {
		return nil, nil, err
	}
	mountsInUserns, err := sup.mounts(len(sp.Protect) > 0)
	if err != nil {
		return nil, nil, err
	}
	// A thread of this process makes its namespaces only when privileged;
	// otherwise they are made when the trampoline is cloned.
	trampoline := rewrite || !sup.threadNetns && (sp.Net == string(CutNamespace) || sup.pidns) || mountsInUserns
	if trampoline && !mainCalled.Load() {
		return nil, nil, ErrNoTrampoline
	}
	sp.Write = s.writable(dir)
	// A call started from a thread of this process, which no Watch
	// listens to, may use a thread kept from an earlier call of the same
	// spec, and that thread's directory (see keptThread): only where the
	// program gets a PID namespace, whose end ends everything that could
	// still write the directory.
	var keep *keptThread
	var tmp string
	var removeTmp func()
	if !trampoline && tag == "" && sup.pidns {
		if keep, err = keptThreadFor(sp); err != nil {
			return nil, nil, fmt.Errorf("sandbox: creating the per-call temporary directory: %w", err)
		}
	}
	if keep != nil {
		tmp, removeTmp = keep.tmp.path, keep.end
	} else {
		callTmp, err := newCallTemp(callTempBase())
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: creating the per-call temporary directory: %w", err)
		}
		tmp, removeTmp = callTmp.path, callTmp.remove
	}
	sp.Write = append([]string{tmp}, sp.Write...)
	env := cmd.Env
	if env == nil {
		env = os.Environ() // what exec.Cmd would have given the program
	}
	vars := []string{"TMPDIR=" + tmp}
	if s.cacheDir != "" && s.policy.Mode == WorkspaceWrite {
		// A missing cache directory cannot be granted, and the first
		// `go build` would then fail to create it. A thread used before
		// holds it among its rules' paths, just found unchanged.
		if keep == nil || !keep.used() {
			_ = os.MkdirAll(s.cacheDir, 0o700)
		}
		vars = append(vars, s.cacheVars...)
	}
	if s.policy.LimitReads {
		// The user's caches are not readable, let alone writable: a
		// compiler's cache lives for the call.
		vars = append(vars, cacheEnv(filepath.Join(tmp, "cache"))...)
	}
	cmd.Env = withVars(env, vars...)
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		c := *cmd.SysProcAttr
		attr = &c
	}
	withPIDNamespace(attr, sup)
	cmd.SysProcAttr = attr
	// What is still running when the caller is done is killed, and with
	// the first process of a PID namespace, the rest of it.
	kill := func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill() // after Wait: os.ErrProcessDone, nothing sent
		}
	}
	if !trampoline {
		// The rules every ruleset has are opened here, in this
		// process's mount namespace, not on the thread, which may make
		// one of its own.
		holdRules(sp.LimitRead)
		if keep != nil {
			var once sync.Once
			start := func() error { return keep.start(cmd, sp) }
			return keeping(cmd, attr, start), func() { once.Do(func() { kill(); keep.release(cmd) }) }, nil
		}
		start, unblock := startFromRestrictedThread(cmd, sp)
		return keeping(cmd, attr, start), func() { kill(); unblock(); removeTmp() }, nil
	}
	withTrampolineNamespaces(attr, sup, &sp, mountsInUserns)
	sp.Revision = specRevision()
	encoded, err := json.Marshal(sp)
	if err != nil {
		removeTmp()
		return nil, nil, fmt.Errorf("sandbox: encoding the policy: %w", err)
	}
	cmd.Args = append([]string{trampolineName, string(encoded)}, cmd.Args...)
	cmd.Path = trampolinePath(sup, sp.Write)
	return keeping(cmd, attr, cmd.Start), func() { kill(); removeTmp(); forgetProbeAfter(cmd.ProcessState) }, nil
}

// callTempPrefix begins the name of every per-call temporary directory.
const callTempPrefix = trampoline.CallTempPrefix

// tmpfsBase is where per-call temporary directories go when it is a tmpfs
// this user may write: creating and removing one there costs tens of
// microseconds, against up to a millisecond and a half on a disk. Its
// size is bounded by the tmpfs's own (its size= mount option, half the
// memory by default), shared with whatever else uses it. Nothing of /run
// ($XDG_RUNTIME_DIR) is used: a program reads all of /run, whereas in
// /dev/shm the sandbox hides the other calls' directories (see
// deviceReadable).
const tmpfsBase = trampoline.TmpfsBase

// tmpfsMinSize is the smallest tmpfsBase used: a container's default
// /dev/shm (64 MiB) would fail a build that a disk holds.
const tmpfsMinSize = 1 << 30

var tmpfsUsable = sync.OnceValue(func() bool {
	// An operator who set $TMPDIR chose where temporary files go.
	if os.Getenv("TMPDIR") != "" {
		return false
	}
	var st unix.Statfs_t
	return unix.Statfs(tmpfsBase, &st) == nil && st.Type == unix.TMPFS_MAGIC &&
		uint64(st.Blocks)*uint64(st.Bsize) >= tmpfsMinSize &&
		unix.Access(tmpfsBase, unix.W_OK|unix.X_OK) == nil
})

// callTempBase is the directory the per-call temporary directories are
// made in: tmpfsBase where usable (a tmpfs of at least tmpfsMinSize, and
// $TMPDIR unset), else os.TempDir().
func callTempBase() string {
	if tmpfsUsable() {
		return tmpfsBase
	}
	return os.TempDir()
}

// keeping wraps start so that it refuses a command whose SysProcAttr was
// replaced after Prepare: the namespaces and the parent-death signal are
// in the one Prepare set. Change its fields instead.
func keeping(cmd *exec.Cmd, attr *syscall.SysProcAttr, start func() error) func() error {
	return func() error {
		if cmd.SysProcAttr != attr {
			return errors.New("sandbox: the command's SysProcAttr was replaced after Prepare, losing the sandbox's namespaces; set its fields instead")
		}
		return start()
	}
}

// startFromRestrictedThread returns a start function that confines a
// fresh OS thread as sp says and starts cmd from it: a child inherits the
// credentials (Landlock domain, capabilities, no_new_privs) and the
// network namespace of the thread that forks it. The thread is never
// unlocked, so the Go runtime ends it with its goroutine instead of
// reusing it for anything else; the goroutine waits for unblock first,
// because Linux sends the child's parent-death signal when the thread
// that cloned it ends, not the process.
func startFromRestrictedThread(cmd *exec.Cmd, sp spec) (start func() error, unblock func()) {
	released := make(chan struct{})
	var once sync.Once
	unblock = func() { once.Do(func() { close(released) }) }
	start = func() error {
		done := make(chan error, 1)
		trampoline.GoOnChildlessThread(func() {
			err := confineThread(sp)
			if err == nil {
				err = cmd.Start()
			}
			done <- err
			if err == nil {
				<-released
			}
		})
		return <-done
	}
	return start, unblock
}

// withPIDNamespace makes the program the first process of a PID
// namespace of its own, where this machine allows it, and has it killed
// when the thread that starts it ends (with this process, or at release).
func withPIDNamespace(attr *syscall.SysProcAttr, sup support) {
	attr.Pdeathsig = syscall.SIGKILL
	if sup.pidns {
		attr.Cloneflags |= syscall.CLONE_NEWPID
	}
}

// namespaceFlags are the clone flags of namespaces that an unprivileged
// process may only create together with a user namespace.
const namespaceFlags = syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS |
	syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// withTrampolineNamespaces adds what the trampoline's clone creates: a
// network namespace when the network is cut by one and, for an
// unprivileged process, the user namespace that the other namespaces
// need, and that mounts (the trampoline makes its mount namespace itself,
// see [protect]) need. No ID maps are given: this process is not dumpable (basis makes
// itself so), so its child's /proc/<pid>/uid_map belongs to root and
// os/exec could not write it; the trampoline, dumpable again after its
// exec, maps itself (see [mapSelf]). CAP_SYS_ADMIN (to write the maps) and
// CAP_NET_ADMIN (to bring loopback up) in the new user namespace are kept
// across the exec as ambient capabilities (CAP_SYS_ADMIN also makes the
// mount namespace); the trampoline clears them before the program runs.
func withTrampolineNamespaces(attr *syscall.SysProcAttr, sup support, sp *spec, mounts bool) {
	if sp.Net == string(CutNamespace) {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if !sup.userns || attr.Cloneflags&namespaceFlags == 0 && !mounts {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings, attr.GidMappings = nil, nil
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN)
	sp.UserNS, sp.UID, sp.GID = true, os.Geteuid(), os.Getegid() // the kernel maps only these
}

// probeKernel asks the kernel for its Landlock ABI, which namespaces a
// program can get — made by a thread of this process (privileged), or by
// a start of the trampoline exactly as a confined run makes them — and
// what mount namespaces need.
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
	if s.abi < 1 {
		return s
	}
	// What a confined start does on its thread, tried on one throwaway
	// thread: each new thread costs a clone, and every sandboxed basis
	// process probes once.
	p := trampoline.ProbeThread()
	s.threadNetns = p.Net == nil
	if s.threadNetns {
		s.netns, s.pidns = true, p.PID == nil
	} else {
		probeUserns(&s)
	}
	probeMounts(&s, p.Mounts == nil)
	return s
}

// probeUserns finds whether the trampoline, cloned into new network and
// PID namespaces (and a user namespace where this process is not
// privileged), can run.
func probeUserns(s *support) {
	if !mainCalled.Load() {
		return // the trampoline, which a user namespace needs, is not there
	}
	attempts := []bool{true} // an unprivileged process needs a user namespace
	if os.Geteuid() == 0 {
		attempts = []bool{false, true}
	}
	// A success an earlier process of this binary had here stands (see
	// rememberedProbe).
	h, _ := sandboxHelper()
	var key string
	dir := probeCacheDir()
	if dir != "" { // nowhere to remember it: not worth the reads
		key = probeKey(h)
	}
	if key != "" {
		usedProbeKey.Store(&key)
	}
	if r, ok := rememberedProbe(dir, key); ok && slices.Contains(attempts, r.userns) && (h != nil || !r.helper) {
		s.netns, s.pidns, s.userns, s.helper = true, true, r.userns, r.helper
		return
	}
	// The helper first, where there is one: a helper of another build
	// refuses, and the running binary is asked.
	paths := []string{selfPath}
	if h != nil {
		paths = []string{h.path, selfPath}
	}
	for _, userns := range attempts {
		for _, path := range paths {
			if probeTrampolineFunc(path, userns) == nil {
				viaHelper := path != selfPath
				s.netns, s.pidns, s.userns, s.helper = true, true, userns, viaHelper
				rememberProbe(dir, key, probeResult{userns: userns, helper: viaHelper})
				return
			}
		}
	}
}

var (
	// probeTrampolineFunc is probeTrampoline; tests count its calls.
	probeTrampolineFunc = probeTrampoline
	// usedProbeKey is the key of the probe this process went by.
	usedProbeKey atomic.Pointer[string]
)

// probeTrampoline starts the trampoline at path in new network and PID
// namespaces (and a user namespace with userns), as a confined run would,
// and has it map itself and bring loopback up, then exit.
func probeTrampoline(path string, userns bool) error {
	sp := spec{Version: specVersion, Revision: specRevision(), Net: trampoline.CutNamespace, Probe: true}
	attr := &syscall.SysProcAttr{}
	withPIDNamespace(attr, support{pidns: true})
	withTrampolineNamespaces(attr, support{userns: userns}, &sp, false)
	encoded, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: path, Args: []string{trampolineName, string(encoded)}, Env: []string{}, SysProcAttr: attr}
	return cmd.Run()
}
