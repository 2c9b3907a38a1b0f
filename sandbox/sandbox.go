//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnavailable is matched (errors.Is) by every error that says this
// machine cannot confine a program as the policy asks: an
// [*UnavailableError]. A host branches on it to tell the operator how to
// opt out ("mode": "off") instead of reporting a failed call, as basis
// check does.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrNoTrampoline is returned by [Sandbox.Prepare] in a program that did
// not call [Main] at the top of main: the sandbox re-executes the running
// binary to confine a program, and without Main that binary would run its
// own main instead. A host's tests branch on it to say that main must
// call [Main] first.
var ErrNoTrampoline = errors.New("sandbox: this program does not call sandbox.Main() at the top of main, so it cannot confine the programs it starts")

// UnavailableError says why this machine cannot confine a program and how
// the operator opts out. The sandbox never falls back to an unconfined
// run by itself.
type UnavailableError struct {
	// Reason is what is missing, e.g. "this kernel has no Landlock".
	Reason string
}

// Error says what is missing and how to opt out.
func (e *UnavailableError) Error() string {
	return "sandbox unavailable: " + e.Reason + `; to run programs without a sandbox, the operator sets "mode": "off" in ` +
		ConfigFile + ` in basis's config directory`
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// NetworkCut says how a program without the network is cut off from it.
type NetworkCut string

const (
	// CutNamespace: the program runs in a network namespace of its own,
	// with only a loopback interface; nothing of the host's network,
	// including the host's loopback listeners, is reachable.
	CutNamespace NetworkCut = "namespace"
	// CutLandlockTCP: where namespaces are not available, Landlock (ABI 4
	// or later) denies every TCP bind and connect, and the seccomp filter
	// refuses every socket (UDP and Unix ones too).
	CutLandlockTCP NetworkCut = "landlock-tcp"
	// CutUnavailable: neither works here; a run without the network fails
	// closed.
	CutUnavailable NetworkCut = "unavailable"
)

// TempDirPlaceholder stands for the per-call temporary directory in a
// [Description]: its real name differs on every call, and a description
// must be the same for the same call so rules can match it.
const TempDirPlaceholder = "${TMPDIR}"

// ProgramPlaceholder stands for the program's own file in a
// [Description]'s read list: the sandbox grants it, whatever it is, and
// the preview names it beside.
const ProgramPlaceholder = "${PROGRAM}"

// SystemReadDirs are the system directories a program whose reads are
// limited ([Policy.LimitReads]) may read, where they exist: what programs
// and their libraries are made of, and the kernel's views of the process.
// Of /etc every entry but the secrets (shadow, gshadow, sudoers, ssh host
// keys, basis's own system config) is readable.
var SystemReadDirs = []string{"/bin", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/nix", "/opt", "/proc", "/sbin", "/sys", "/usr"}

// Sandbox confines the programs of one tool in one workspace. Its
// [Sandbox.Prepare] method plugs into subprocess.Cmd.Confine (or confines
// any *exec.Cmd); [Sandbox.Describe] says what it allows, for previews.
// A Sandbox may be shared by concurrent calls.
type Sandbox struct {
	policy    Policy
	workspace string
	cacheDir  string
	cacheVars []string  // cacheEnv(cacheDir), made once
	listings  *listings // what the search for protected paths read: the process's
}

// New returns the sandbox for policy in the workspace rooted at
// workspace (an absolute path, or relative to the current directory). In
// WorkspaceWrite mode its programs get a writable cache of their own,
// under <user cache dir>/basis/sandbox/, because compilers and package
// managers write one: XDG_CACHE_HOME, GOCACHE, GOMODCACHE,
// npm_config_cache, PIP_CACHE_DIR and YARN_CACHE_FOLDER point there. The
// user's own cache directory stays read-only unless the policy names it.
func New(policy Policy, workspace string) (*Sandbox, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if workspace == "" {
		return nil, fmt.Errorf("%w: no workspace root", errInvalidPolicy)
	}
	root, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace root: %w", err)
	}
	policy.Mode = policy.mode()
	policy.Write = slices.Clone(policy.Write)
	policy.Protect = slices.Clone(policy.Protect)
	s := &Sandbox{policy: policy, workspace: root, listings: &processListings}
	s.cacheDir = cacheDirFor(root)
	if s.cacheDir != "" {
		s.cacheVars = cacheEnv(s.cacheDir)
	}
	return s, nil
}

// CacheDir returns the cache the sandbox's programs get in
// WorkspaceWrite mode (see [New]); "" when the user has none. Prepare
// creates it.
func (s *Sandbox) CacheDir() string { return s.cacheDir }

// Policy returns the policy the sandbox enforces.
func (s *Sandbox) Policy() Policy {
	p := s.policy
	p.Write = slices.Clone(p.Write)
	p.Protect = slices.Clone(p.Protect)
	return p
}

// Description is what a preview shows of a sandbox, and what rules can
// match: put it in the subject as "sandbox". Its JSON form is stable:
//
//	{"mode": "workspace-write", "network": "none", "network_cut": "namespace", "write": ["${TMPDIR}", "/repo", ...], "protected": ["/repo/.basis", "/repo/.git"]}
type Description struct {
	// Mode is the write mode.
	Mode Mode `json:"mode"`
	// Network is "allowed" or "none".
	Network string `json:"network"`
	// NetworkCut says how "none" is enforced on this machine; empty when
	// the network is allowed or the sandbox is off.
	NetworkCut NetworkCut `json:"network_cut,omitempty"`
	// Write lists, sorted, where the program may write: absolute paths
	// with symlinks resolved, and TempDirPlaceholder for the per-call
	// temporary directory. Off is ["/"].
	Write []string `json:"write"`
	// Read lists, sorted, the only places the program may read when its
	// reads are limited ([Policy.LimitReads]), besides where it may write:
	// ProgramPlaceholder, the system directories ([SystemReadDirs]) that
	// exist, the workspace and the working directory, symlinks resolved.
	// Absent when it may read everywhere the user can.
	Read []string `json:"read,omitempty"`
	// Protected lists, sorted, what stays read-only inside those
	// directories, found when described: absolute paths with symlinks
	// resolved (a .git, .basis, .mcp.json, nested repositories and
	// submodules, the policy's protected paths); none beneath another.
	Protected []string `json:"protected,omitempty"`
}

// Describe says what a program started in dir (its working directory,
// absolute or relative to the workspace root) may do.
func (s *Sandbox) Describe(dir string) Description {
	if s.policy.Mode == Off {
		return Description{Mode: Off, Network: "allowed", Write: []string{"/"}}
	}
	d := Description{Mode: s.policy.Mode, Network: "allowed"}
	if !s.policy.Network {
		d.Network = "none"
		d.NetworkCut = probe().cut()
	}
	d.Write = []string{TempDirPlaceholder}
	for _, w := range s.writable(s.absDir(dir)) {
		d.Write = append(d.Write, resolve(w))
	}
	slices.Sort(d.Write)
	d.Write = slices.Compact(d.Write)
	if s.policy.LimitReads {
		d.Read = append([]string{ProgramPlaceholder}, s.readRoots(s.absDir(dir))...)
	}
	d.Protected, _ = s.protectedPaths(s.absDir(dir))
	return d
}

// readRoots lists, sorted and resolved, what a program in dir whose reads
// are limited may read besides its program and where it may write.
func (s *Sandbox) readRoots(dir string) []string {
	var out []string
	for _, p := range SystemReadDirs {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, resolve(p))
		}
	}
	out = append(out, resolve(s.workspace), resolve(dir))
	slices.Sort(out)
	// /bin is /usr/bin on most systems: what lies beneath another entry
	// is said once.
	var kept []string
	for _, p := range out {
		if len(kept) == 0 || !within(p, kept[len(kept)-1]) {
			kept = append(kept, p)
		}
	}
	return kept
}

// Summary is the description as one human line.
func (d Description) Summary() string {
	var b strings.Builder
	b.WriteString("sandbox " + string(d.Mode))
	if d.Mode == Off {
		b.WriteString(": no confinement")
		return b.String()
	}
	b.WriteString(": writes only to " + strings.Join(d.Write, ", "))
	if len(d.Read) > 0 {
		b.WriteString("; reads only its program, the system directories")
		for _, r := range d.Read {
			if r != ProgramPlaceholder && !slices.ContainsFunc(SystemReadDirs, func(sys string) bool { return within(r, sys) }) {
				b.WriteString(", " + r)
			}
		}
	}
	if len(d.Protected) > 0 {
		b.WriteString(" (read-only inside: " + strings.Join(d.Protected, ", ") + ")")
	}
	switch {
	case d.Network == "allowed":
		b.WriteString("; network allowed")
	case d.NetworkCut == CutNamespace:
		b.WriteString("; no network (own network namespace, loopback only; no Unix sockets)")
	case d.NetworkCut == CutLandlockTCP:
		b.WriteString("; no network (Landlock denies TCP bind and connect, seccomp every socket)")
	default:
		b.WriteString("; no network, and this machine cannot cut it: runs fail")
	}
	return b.String()
}

// writable lists the directories a program in dir may write, besides the
// per-call temporary directory.
func (s *Sandbox) writable(dir string) []string {
	if s.policy.Mode != WorkspaceWrite {
		return nil
	}
	w := []string{s.workspace}
	if !s.inWorkspace(dir) {
		// A cwd inside the workspace is already writable. Granting it
		// again would grant what it leads to when Landlock opens it: a
		// program that can write the workspace could have swapped it for
		// a link to anywhere since the caller checked it.
		w = append(w, dir)
	}
	if s.cacheDir != "" {
		w = append(w, s.cacheDir)
	}
	return append(w, s.policy.Write...)
}

// inWorkspace reports whether dir (absolute and clean) is the workspace
// root or lies beneath it, as written or below the root's real path.
func (s *Sandbox) inWorkspace(dir string) bool {
	under := func(root string) bool {
		rel, err := filepath.Rel(root, dir)
		return err == nil && (rel == "." || filepath.IsLocal(rel))
	}
	// The root as written first: resolving it walks every component of
	// its path, and a program's directory is usually the root itself.
	return under(s.workspace) || under(resolve(s.workspace))
}

func (s *Sandbox) absDir(dir string) string {
	switch {
	case dir == "":
		return s.workspace
	case filepath.IsAbs(dir):
		return filepath.Clean(dir)
	}
	return filepath.Join(s.workspace, dir)
}

// resolve returns path with symlinks resolved when it exists: Landlock
// grants access to the directory a path leads to, so that is what a
// description must name.
func resolve(path string) string {
	if r, err := evalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// Check reports whether this machine can confine a program as policy
// asks: nil, or an [*UnavailableError] saying what is missing. `basis
// check` reports it; [Sandbox.Prepare] refuses to run without it.
func Check(policy Policy) error {
	if policy.mode() == Off {
		return nil
	}
	return probe().check(policy.Network)
}
