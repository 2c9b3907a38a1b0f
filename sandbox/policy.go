//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much of the filesystem a sandboxed program may write, in the
// words operators already use for other agents.
type Mode string

const (
	// WorkspaceWrite (the default) allows writes to the workspace root, the
	// tool's working directory, the per-call temporary directory, a cache
	// of the sandbox's own and the paths the policy names, except the
	// protected paths ([Policy.Protect]).
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly allows writes to the per-call temporary directory only.
	ReadOnly Mode = "read-only"
	// Off runs the program unconfined. Only the operator can choose it.
	Off Mode = "off"
)

// strictness orders the modes: a higher value allows less.
func (m Mode) strictness() int {
	switch m {
	case Off:
		return 0
	case WorkspaceWrite:
		return 1
	case ReadOnly:
		return 2
	}
	return -1
}

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool { return m.strictness() >= 0 }

// Policy is what one program may do.
type Policy struct {
	// Mode bounds writes. The zero value is WorkspaceWrite.
	Mode Mode
	// Network allows the network. Without it the program gets a network
	// namespace of its own (loopback only) or, where namespaces are not
	// available, Landlock's TCP rules deny every TCP bind and connect; in
	// both cases it cannot make a Unix socket (and, in the second, no
	// socket at all).
	Network bool
	// Write names further directories the program may write to in
	// WorkspaceWrite mode: absolute paths. ReadOnly ignores them.
	Write []string
	// LimitReads limits what the program may read to the workspace, its
	// working directory, its own program file, the system directories
	// ([SystemReadDirs]; of /etc, not its secrets) and where it may write,
	// instead of everywhere the user can: $HOME, the operator's config
	// and other repositories stay closed. A read-only tool's sandbox sets
	// it with ReadOnly and no network. The per-call temporary directory
	// then also holds the program's caches (XDG_CACHE_HOME, GOCACHE, …),
	// since it can write nowhere else.
	LimitReads bool
	// Protect names what stays read-only inside the writable directories
	// in WorkspaceWrite mode, besides what always does (.git — the
	// directories', their submodules' and nested repositories' — .basis
	// and .mcp.json): absolute paths, or relative ones looked up in every
	// writable directory (".envrc" protects each one's .envrc).
	Protect []string
}

// errInvalidPolicy is wrapped by every error about a policy that cannot
// be used as written (a config file's problems are [*configfile.Error]).
// No caller branches on it: the message says what to fix.
var errInvalidPolicy = errors.New("invalid sandbox policy")

// mode returns the effective mode: the zero value means WorkspaceWrite.
func (p Policy) mode() Mode {
	if p.Mode == "" {
		return WorkspaceWrite
	}
	return p.Mode
}

// Validate reports a mode that is not one of the three or a write path
// that is not absolute.
func (p Policy) Validate() error {
	if !p.mode().Valid() {
		return fmt.Errorf("%w: mode must be %q, %q or %q", errInvalidPolicy, WorkspaceWrite, ReadOnly, Off)
	}
	for i, w := range p.Write {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("%w: write path %d is not absolute", errInvalidPolicy, i)
		}
	}
	for i, path := range p.Protect {
		if err := validProtect(path); err != nil {
			return fmt.Errorf("%w: protected path %d %s", errInvalidPolicy, i, err)
		}
	}
	return nil
}

// Tighten returns the stricter combination of an operator's policy and a
// workspace's: the stricter mode, the network only when both allow it,
// only the operator's extra write paths that lie inside one the workspace
// also names (a workspace with no Write list keeps the operator's), and
// the protected paths of both. A workspace can therefore deny, never
// widen.
func Tighten(operator, workspace Policy) Policy {
	out := Policy{Mode: operator.mode(), Network: operator.Network && workspace.Network,
		LimitReads: operator.LimitReads || workspace.LimitReads}
	for _, p := range slices.Concat(operator.Protect, workspace.Protect) {
		if !slices.Contains(out.Protect, p) {
			out.Protect = append(out.Protect, p)
		}
	}
	if w := workspace.mode(); w.strictness() > out.Mode.strictness() {
		out.Mode = w
	}
	for _, p := range operator.Write {
		if workspace.Write == nil || slices.ContainsFunc(workspace.Write, func(limit string) bool { return within(p, limit) }) {
			out.Write = append(out.Write, p)
		}
	}
	return out
}

// within reports whether path is limit or lies beneath it, lexically.
func within(path, limit string) bool {
	path, limit = filepath.Clean(path), filepath.Clean(limit)
	if path == limit || limit == "/" {
		return true
	}
	return strings.HasPrefix(path, limit+"/")
}
