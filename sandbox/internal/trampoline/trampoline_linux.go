package trampoline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Name is argv[0] of the re-executed binary: the mark the dispatch looks
// for.
const Name = "basis-sandbox"

// Exit codes of a trampoline that could not run the program (the sandbox
// package documents them).
const (
	ExitNotConfined   = 125
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// How the network is cut ([Spec.Net]); the sandbox package's NetworkCut
// values.
const (
	CutNamespace   = "namespace"
	CutLandlockTCP = "landlock-tcp"
)

// Spec is what the trampoline is told, as JSON in its argv[1]. Its argv
// from 2 on is the program's own argv, argv[0] included.
type Spec struct {
	Version int `json:"v"`
	// Revision is the [Revision] of the build that asks.
	Revision string   `json:"rev"`
	Program  string   `json:"program"`
	Write    []string `json:"write"`
	// Net is "" (allowed), "namespace" or "landlock-tcp".
	Net string `json:"net,omitempty"`
	// UserNS: the trampoline was cloned into a user namespace of its own
	// with nothing mapped yet; it maps UID and GID (the user who started
	// it, which it cannot see from inside) to themselves.
	UserNS bool `json:"userns,omitempty"`
	UID    int  `json:"uid,omitempty"`
	GID    int  `json:"gid,omitempty"`
	// Protect lists what is mounted read-only, in a mount namespace of
	// the program's own, before it runs.
	Protect []string `json:"protect,omitempty"`
	// LimitRead: the program may read only Read (directories or files),
	// /dev's usual files and what it may write, not everywhere.
	LimitRead bool     `json:"limit_read,omitempty"`
	Read      []string `json:"read,omitempty"`
	// Probe: set the namespaces up and exit 0; run nothing.
	Probe bool `json:"probe,omitempty"`
	// Tag names the thread that restricts itself, so that the kernel's
	// audit records of its Landlock domain name the call (the sandbox's
	// Watch).
	Tag string `json:"tag,omitempty"`
}

// Version is [Spec.Version] of this build: the trampoline refuses another.
const Version = 3

// UnavailableError says what this machine lacks to confine a program; the
// sandbox package turns it into its own UnavailableError, whose message
// this one's repeats for the trampoline's stderr.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string {
	return "sandbox unavailable: " + e.Reason + `; to run programs without a sandbox, the operator sets "mode": "off" in ` +
		ConfigFile + ` in basis's config directory`
}

// ConfigFile is the sandbox package's ConfigFile, which
// [UnavailableError] names.
const ConfigFile = "sandbox.json"

// init dispatches the trampoline: a process that is the sandbox's
// re-execution confines itself and executes the program here, before the
// initialisers of every package that does not come before this one (see
// the package's doc) and before main.
func init() {
	if len(os.Args) > 1 && os.Args[0] == Name {
		// The trampoline executes the program from the main thread: the
		// parent-death signal set at its clone belongs to that thread, and
		// an exec from any other thread would make that thread the leader
		// and lose it. Init runs on the main thread, locked to it.
		runtime.LockOSThread()
		run()
	}
}

// run runs the trampoline of this process's arguments and exits with its
// status: 0 after a probe; otherwise it executes the program or exits
// with a status that says why it could not.
func run() {
	err := trampoline(os.Args[1], os.Args[2:])
	if err == nil {
		os.Exit(0) // a probe: the namespaces work
	}
	fmt.Fprintf(os.Stderr, "basis sandbox: %v\n", err)
	code := ExitNotConfined
	var ex *execError
	if errors.As(err, &ex) {
		code = ExitCannotExecute
		if errors.Is(ex.err, syscall.ENOENT) {
			code = ExitNotFound
		}
	}
	os.Exit(code)
}

type execError struct{ err error }

func (e *execError) Error() string { return "cannot execute the program: " + e.err.Error() }

// trampoline finishes the namespaces it was cloned into, restricts this
// process as sp says and executes the program; it returns only on failure,
// or with nil after a probe.
func trampoline(encoded string, argv []string) error {
	var sp Spec
	if err := json.Unmarshal([]byte(encoded), &sp); err != nil || sp.Version != Version || !sp.Probe && (sp.Program == "" || len(argv) == 0) {
		return errors.New("malformed sandbox request; the program did not run")
	}
	if sp.Revision != Revision() {
		return fmt.Errorf("this %s is another build than the basis that started it (sandbox revision %.12s, asked for %.12s): install the two from one version; the program did not run", Name, Revision(), sp.Revision)
	}
	runtime.LockOSThread() // the exec happens from the thread that was set up
	if sp.UserNS {
		// Cloned into a user namespace with no IDs mapped (the parent,
		// not dumpable, may not write the maps): this process, dumpable
		// again since its exec, maps its own uid and gid to themselves,
		// so the program runs as the operator's user, not as nobody.
		if err := mapSelf(sp.UID, sp.GID); err != nil {
			return fmt.Errorf("mapping the user namespace: %w; the program did not run", err)
		}
	}
	if sp.Net == CutNamespace {
		// The namespace was made when this process was started; what is
		// left is bringing loopback up.
		sp.Net = netReady
	}
	if sp.Probe {
		if sp.Net == netReady {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("bringing loopback up: %w", err)
			}
		}
		return nil
	}
	if err := ConfineThread(sp); err != nil {
		return err
	}
	if sp.UserNS {
		// What is left of the capabilities kept for the setup (the
		// inheritable set survives an exec) goes.
		var none [2]unix.CapUserData // version 3 takes two
		if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
			return fmt.Errorf("clearing capabilities: %w; the program did not run", err)
		}
	}
	// Set at the clone already; again in case this is not the thread it
	// was set on.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w; the program did not run", err)
	}
	if err := syscall.Exec(sp.Program, argv, os.Environ()); err != nil {
		return &execError{err: err}
	}
	return nil
}

// mapSelf writes the one-line identity maps of this process's user
// namespace: the kernel lets the namespace's owner map its own uid and
// (with setgroups denied) its own gid, given CAP_SYS_ADMIN in the
// namespace, which the trampoline holds as an ambient capability.
func mapSelf(uid, gid int) error {
	for _, f := range []struct{ path, line string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
		{"/proc/self/gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
	} {
		fd, err := unix.Open(f.path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		_, err = unix.Write(fd, []byte(f.line))
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return nil
}

// netReady marks, in the trampoline, a network namespace that already
// exists.
const netReady = "namespace-ready"

// ConfineThread confines the calling thread, which must be locked and
// never unlocked: in the sandbox's network namespace (unless sp.Net is ""
// or landlock-tcp; in the trampoline, started in a namespace of its own,
// loopback is brought up), in a mount namespace of its own where the
// protected paths are read-only, the capabilities that reach past the
// sandbox dropped, Landlock applied, and without the network no socket
// to reach a Unix socket (seccomp).
func ConfineThread(sp Spec) error {
	switch sp.Net {
	case CutNamespace:
		fd, err := SharedNetNamespace()
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
		}
		if err != nil {
			return fmt.Errorf("entering the sandbox's network namespace: %w; the program did not run", err)
		}
	case netReady:
		// Best effort: without loopback the program still has no network.
		_ = loopbackUp()
		sp.Net = CutNamespace
	}
	if err := Protect(sp.Protect); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("dropping capabilities: %w; the program did not run", err)
	}
	if err := restrict(sp); err != nil {
		return err
	}
	return FilterSockets(sp.Net)
}

// restrict applies Landlock to the calling thread, which must be locked
// and must execute the program next: read everywhere but /dev (see readable), write beneath sp.Write and
// to the usual device files; with Net "landlock-tcp", no TCP bind or
// connect; no signals to processes outside the sandbox.
func restrict(sp Spec) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return (&UnavailableError{Reason: "this kernel has no Landlock"})
	}
	// A struct literal, not the deprecated NewConfig: NewRulesetFD
	// rejects access rights this go-landlock does not know, as NewConfig
	// did, before best effort could drop them silently.
	cfg := landlock.Config{
		HandledAccessFS: landlock.V5.HandledAccessFS,
		Scoped:          landlock.ScopedSet(ll.ScopeSignal),
	}
	switch sp.Net {
	case CutLandlockTCP:
		if abi < 4 {
			return &UnavailableError{Reason: "Landlock is older than ABI 4 and cannot cut the network"}
		}
		cfg.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
		cfg.Scoped |= landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
	case CutNamespace:
		cfg.Scoped |= landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
	}
	held, read := readable(), []landlock.Rule(nil)
	if sp.LimitRead {
		held, read = limitedReadable(sp.Read)
	}
	rules := append(read, landlock.RWDirs(sp.Write...).WithRefer().IgnoreIfMissing())
	held = slices.Concat(held, writableDevices())
	// Only this thread is restricted, and it executes the program next:
	// execve gives the new program this thread's credentials, and every
	// other thread of the trampoline ends with it. Restricting all threads
	// would stop the world for nothing (milliseconds on a busy machine).
	fd, flags, err := cfg.BestEffort().EnableLoggingForSubprocesses().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w; the program did not run", err)
	}
	if fd < 0 {
		return &UnavailableError{Reason: "Landlock restricts nothing on this kernel"}
	}
	defer unix.Close(fd)
	handled := handledAccessFS(abi)
	for _, r := range held {
		if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{ParentFd: r.fd, AllowedAccess: r.access & handled}, 0); err != nil {
			return fmt.Errorf("building the Landlock ruleset: %w; the program did not run", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w; the program did not run", err)
	}
	if sp.Tag != "" {
		// The domain's audit record names the thread that made it: this
		// name ties the kernel's reports of its denials to the call.
		if err := SetThreadName(sp.Tag); err != nil {
			return fmt.Errorf("naming the thread: %w; the program did not run", err)
		}
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("applying Landlock: %w; the program did not run", err)
	}
	return nil
}

// readable is what a sandboxed program may read: every directory listed,
// every file outside /dev, and of /dev only what ordinary programs read —
// the deviceFiles and the shared-memory directories. Terminals
// (/dev/pts/N: keystrokes typed there), consoles, input devices and raw
// disks stay closed. Landlock grants a right on a whole hierarchy, so "/"
// is granted for listing only, and reading for each entry of "/" but
// /dev. Made once per process, and held open (see [heldRule]): an entry
// of "/" made later is not readable, which nothing basis starts should
// need.
func readable() []heldRule {
	readableOnce.Do(func() {
		readableRules = openRules([]pathRule{{"/", ll.AccessFSReadDir}})
		var entries []pathRule
		for _, path := range topLevel("/") {
			if path != "/dev" {
				entries = append(entries, readRule(path))
			}
		}
		readableRules = append(readableRules, openRules(entries)...)
		readableRules = append(readableRules, deviceReadable()...)
	})
	return readableRules
}

// limitedReadable is what a program whose reads are limited may read:
// each of paths (a directory's hierarchy, or one file) and /dev's shared
// memory, but of /etc only the entries that hold no secret. No right on
// "/" itself: listing it would list every directory beneath. What every
// such program may read is held (see [heldRule]); paths but /etc, which
// differ from call to call, are rules.
func limitedReadable(paths []string) (held []heldRule, rules []landlock.Rule) {
	held = deviceReadable()
	for _, p := range paths {
		if p == "/etc" {
			held = append(held, etcReadable()...)
			continue
		}
		r := readRule(p)
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(r.access), r.path).IgnoreIfMissing())
	}
	return held, rules
}

// etcReadable holds the entries of /etc but its secrets, made once per
// process like readable's.
var etcReadable = sync.OnceValue(func() []heldRule {
	var entries []pathRule
	for _, entry := range topLevel("/etc") {
		if !etcSecrets[base(entry)] {
			entries = append(entries, readRule(entry))
		}
	}
	return openRules(entries)
})

// etcSecrets are the entries of /etc a program whose reads are limited
// may not read: password hashes, sudo's rules, the host's ssh keys and
// basis's own system configuration.
var etcSecrets = map[string]bool{
	"shadow": true, "shadow-": true, "gshadow": true, "gshadow-": true,
	"sudoers": true, "sudoers.d": true, "ssh": true, "basis": true,
}

var (
	readableOnce  sync.Once
	readableRules []heldRule
)

// TmpfsBase is where the sandbox makes per-call temporary directories
// when it is a usable tmpfs, and CallTempPrefix begins each one's name:
// there, a program may read neither the other calls' directories nor
// their names' contents (see deviceReadable).
const (
	TmpfsBase      = "/dev/shm"
	CallTempPrefix = "basis-call-"
)

// deviceDirs are the directories of /dev a program may read: POSIX
// shared memory and message queues.
var deviceDirs = []string{"/dev/shm", "/dev/mqueue"}

// deviceReadable grants reading deviceDirs, except the other calls'
// temporary directories where they live in one of them (see
// the sandbox's callTempBase): that directory may be listed, and each entry read but
// those. Like readable's, the list is made once per process and held:
// what appears there later is not readable.
func deviceReadable() []heldRule {
	deviceOnce.Do(func() {
		var entries []pathRule
		for _, dir := range deviceDirs {
			if dir != TmpfsBase {
				entries = append(entries, pathRule{dir, readDirs})
				continue
			}
			entries = append(entries, pathRule{dir, ll.AccessFSReadDir})
			for _, entry := range topLevel(dir) {
				if !strings.HasPrefix(base(entry), CallTempPrefix) {
					entries = append(entries, readRule(entry))
				}
			}
		}
		deviceRules = openRules(entries)
	})
	return slices.Clip(deviceRules)
}

var (
	deviceOnce  sync.Once
	deviceRules []heldRule
)

// pathRule grants access beneath path.
type pathRule struct {
	path   string
	access uint64
}

// Read rights, which every Landlock ABI handles: a directory's hierarchy,
// and one file (Landlock refuses directory rights on a file).
const (
	readDirs  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	readFiles = ll.AccessFSExecute | ll.AccessFSReadFile
)

// heldRule is a rule every ruleset of this process has, with its path
// opened (O_PATH) once and held open for the process's life: opening
// some thirty paths again at every start cost a sandboxed start about a
// tenth of a plain one. A path replaced later keeps the rule on what it
// was (the new one is not readable: fail closed), and a file system
// mounted at a held path cannot be unmounted, but lazily, while the
// process lives.
type heldRule struct {
	fd     int
	access uint64
}

// HoldRules opens, the first time, the paths of the rules every ruleset
// of a program whose reads are limited (or not) has.
func HoldRules(limitRead bool) {
	if limitRead {
		deviceReadable()
		etcReadable()
	} else {
		readable()
	}
	writableDevices()
}

// openRules opens each rule's path; a path missing is skipped.
func openRules(rules []pathRule) []heldRule {
	held := make([]heldRule, 0, len(rules))
	for _, r := range rules {
		fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		held = append(held, heldRule{fd: fd, access: r.access})
	}
	return held
}

// topLevel lists dir's entries as paths.
func topLevel(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, join(dir, e.Name()))
	}
	return paths
}

// join is dir/name, for a clean absolute dir and a name without a slash
// (path/filepath's initialisation would come late: see the package's doc).
func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// base is the last element of p, a path join made.
func base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// readRule grants reading path: a directory's whole hierarchy, or one
// file.
func readRule(path string) pathRule {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return pathRule{path, readDirs}
	}
	return pathRule{path, readFiles}
}

// writableDevices holds the deviceFiles and terminalFiles, opened once
// per process like readable's. Their rights are what RWFiles grants
// (with the ioctl right for deviceFiles only), cut to what the kernel
// handles when added ([handledAccessFS]).
var writableDevices = sync.OnceValue(func() []heldRule {
	const rw = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSReadFile
	var rules []pathRule
	for _, f := range deviceFiles {
		rules = append(rules, pathRule{f, rw | ll.AccessFSIoctlDev})
	}
	for _, f := range terminalFiles {
		// Without the ioctl right: no TIOCSTI (typing into the
		// operator's terminal), no TIOCSCTTY, no terminal settings.
		rules = append(rules, pathRule{f, rw})
	}
	return openRules(rules)
})

// handledAccessFS is what restrict's rulesets handle on a kernel of
// Landlock ABI abi: V5's rights, less those the kernel does not know (as
// go-landlock's best effort cuts them). A held rule's rights are cut to
// it, since the kernel refuses a rule that grants a right not handled.
func handledAccessFS(abi int) uint64 {
	known := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5}
	return uint64(known[min(abi, len(known))-1].HandledAccessFS & landlock.V5.HandledAccessFS)
}

// deviceFiles are written by ordinary programs (`> /dev/null`) and are
// not a way out; their ioctls (FIONREAD, RNDGETENTCNT) are harmless.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// terminalFiles may be opened for reading and writing but get no ioctl:
// TIOCSTI on a terminal queues input that the operator's shell runs
// after basis exits. A program basis starts has a session of its own and
// no controlling terminal, so /dev/tty fails to open (ENXIO) anyway; it
// stays writable so a host that keeps the program in its session does
// not break `echo > /dev/tty`. The operator's pseudo-terminals
// (/dev/pts/N) and the multiplexer that makes new ones (/dev/ptmx) are
// not writable at all: nothing a confined program does needs to write
// another terminal, and a terminal answers some escape sequences by
// typing into its own input.
var terminalFiles = []string{"/dev/tty"}

// keptCapabilities are what a program started by root keeps: the powers
// over files root normally has. Everything else — entering other
// namespaces (CAP_SYS_ADMIN), reconfiguring networks, tracing, loading
// modules — is removed from the bounding set, so even a root program
// cannot leave its network namespace or regain the capabilities on exec.
var keptCapabilities = map[int]bool{
	unix.CAP_CHOWN: true, unix.CAP_DAC_OVERRIDE: true, unix.CAP_DAC_READ_SEARCH: true,
	unix.CAP_FOWNER: true, unix.CAP_FSETID: true, unix.CAP_KILL: true,
	unix.CAP_SETGID: true, unix.CAP_SETUID: true, unix.CAP_NET_BIND_SERVICE: true,
}

// dropCapabilities clears the ambient set and drops from the bounding set
// every capability not kept. Which ones this process's bounding set holds
// is read once ([toDrop]): a call's thread then makes one system call per
// capability, not two.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != syscall.EINVAL {
		return err
	}
	for _, c := range toDrop() {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			// Without CAP_SETPCAP the bounding set cannot shrink; that
			// matters only for a program that would run with capabilities,
			// which an unprivileged one does not (no_new_privs forbids
			// file capabilities, and the ambient set is clear).
			if err == syscall.EPERM && os.Geteuid() != 0 {
				return nil
			}
			return err
		}
	}
	return nil
}

// toDrop lists the capabilities of this process's bounding set that
// dropCapabilities drops, read once: every thread of a process starts with
// the bounding set of the thread that made it, and basis never widens it
// (no thread can).
func toDrop() []int {
	dropOnce.Do(func() {
		for c := 0; ; c++ {
			have, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
			if err == syscall.EINVAL {
				return // past the last capability this kernel knows
			}
			if err == nil && have != 0 && !keptCapabilities[c] {
				dropList = append(dropList, c)
			}
		}
	})
	return dropList
}

var (
	dropOnce sync.Once
	dropList []int
)

// loopbackUp brings the new namespace's loopback interface up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// ForgetReadable drops the held read rules (not closing them) so that the
// next ruleset opens them again, and HeldReadable lists their
// descriptors: for the sandbox's tests of where they are opened.
func ForgetReadable() { readableOnce, readableRules = sync.Once{}, nil }

// HeldReadable lists the descriptors of the held read rules (see
// [ForgetReadable]).
func HeldReadable() []int {
	fds := make([]int, 0, len(readableRules))
	for _, r := range readableRules {
		fds = append(fds, r.fd)
	}
	return fds
}
