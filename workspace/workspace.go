//go:build unix

// Package workspace gives a host program what the basis command gives a
// workspace: discovery of its root (and the refusal of one another user
// owns), the system, operator and workspace rule layers and the gate built
// from them, the sandbox policy (the operator's sandbox.json tightened by
// the workspace's) and the confinement of every program a tool starts, the
// workspace's declared tools, and an audit file opened so that no program
// can redirect it.
//
// A host calls [Main] first thing in main, then [Open], then
// [Workspace.Runtime]:
//
//	if err := workspace.Main(); err != nil {
//		log.Fatal(err)
//	}
//	ws, err := workspace.Open(ctx, nil)
//	…
//	rt, err := ws.Runtime(ctx, &workspace.RuntimeOptions{Approver: approver.AllowAll(), Audit: "audit.jsonl"})
//
// The package links no spawn, MCP, terminal or shell-parser code: a host
// that wants spawn or MCP servers makes them itself, with [Workspace.Root],
// [Workspace.Environ], [Workspace.PassEnv] and [Workspace.Sandbox], and
// passes their tools in [RuntimeOptions].
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/sandbox"
	"github.com/basis-go/basis/subprocess"
)

// ConfigDirEnv names the operator's configuration directory; see
// [Options.ConfigDir].
const ConfigDirEnv = "BASIS_CONFIG_DIR"

// Options say which workspace [Open] opens and how. The zero value is the
// basis command's default: the workspace found from the current directory,
// the operator's configuration directory, the process's environment.
type Options struct {
	// Root is the workspace's root exactly, as basis -C names it: there is
	// no walk up and no ownership check (naming it is the trust a root
	// another user owns would otherwise need). A relative Root is taken
	// from Dir.
	Root string
	// Dir is where the root is looked for when Root is empty: the nearest
	// directory holding .basis/ from Dir up, as basis finds it. Relative
	// paths (Root, ConfigDir, the audit file) are taken from it too. Empty
	// means the current directory.
	Dir string
	// ConfigDir is the operator's configuration directory (rules.json,
	// sandbox.json, tools.json). Empty means $BASIS_CONFIG_DIR, else
	// $XDG_CONFIG_HOME/basis, else ~/.config/basis.
	ConfigDir string
	// Environ is the environment the configuration's ${VAR}s are read from
	// and the programs inherit (what the sandbox lets through). Nil means
	// os.Environ(). $BASIS_SAFE_DIRECTORIES in it lists roots the operator
	// trusts although another user owns them (see [ForeignWorkspaceError]).
	Environ []string
	// Logger, when set, is told where the workspace was found.
	Logger *slog.Logger
	// DeferSchemas compiles a declared tool's input schema at its first
	// call, not at load (declared.Options.DeferSchemas): a host that runs
	// one call compiles one schema. A validator leaves it false, so every
	// bad schema is a load problem.
	DeferSchemas bool
}

// RootError is an [Options.Root] that is no directory, as given; a host
// words it after its own flag (basis: "-C DIR: …").
type RootError struct{ Root string }

// Error says what to give instead.
func (e *RootError) Error() string {
	return e.Root + ": not a directory; give the workspace's root directory"
}

// Workspace is one opened workspace. It is safe for concurrent use.
type Workspace struct {
	root, configDir, dir string
	// hasBasis: the root holds a .basis directory ([Workspace.HasBasis]).
	hasBasis     bool
	deferSchemas bool
	environ      []string
	logger       *slog.Logger
	sandboxes    *sandboxes
	// sandboxErr is what is wrong with the sandbox configs: every program
	// is refused then.
	sandboxErr error

	mu     sync.Mutex
	closer []io.Closer
}

// Problems splits an error Open, Policy, Declared or Runtime returned,
// joined from several problems, into them, one line each, as a host lists
// them; none for nil.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || !strings.Contains(err.Error(), "\n") {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Problems(e)...)
	}
	return out
}

// Open finds the workspace and reads its sandbox configs. It returns every
// problem, errors.Join'ed. When the root and the configuration directory
// were found and only a sandbox config is at fault, the Workspace is
// returned beside the error, so that a checker can go on listing the other
// files' problems; it confines nothing, and every program is refused.
func Open(ctx context.Context, opts *Options) (*Workspace, error) {
	if opts == nil {
		opts = &Options{}
	}
	w := &Workspace{environ: opts.Environ, logger: opts.Logger, deferSchemas: opts.DeferSchemas}
	if w.environ == nil {
		w.environ = os.Environ()
	}
	w.dir = opts.Dir
	if w.dir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("cannot tell the current directory (%v); name the workspace's root", err)
		}
		w.dir = cwd
	} else if !filepath.IsAbs(w.dir) {
		abs, err := filepath.Abs(w.dir)
		if err != nil {
			return nil, err
		}
		w.dir = abs
	}
	if opts.Root != "" {
		w.root = absFrom(w.dir, opts.Root)
		if info, err := os.Stat(w.root); err != nil || !info.IsDir() {
			return nil, &RootError{Root: opts.Root}
		}
	} else {
		root, err := findRoot(w.dir, w.getenv, statOwner{})
		if err != nil {
			return nil, err
		}
		w.root = root
	}
	if info, err := os.Stat(filepath.Join(w.root, ".basis")); err == nil && info.IsDir() {
		w.hasBasis = true
	}
	var err error
	if w.configDir, err = resolveConfigDir(opts.ConfigDir, w.dir, w.getenv); err != nil {
		return nil, err
	}
	if w.logger != nil {
		w.logger.Debug("workspace opened", "root", w.root, "config_dir", w.configDir)
	}
	w.sandboxes, w.sandboxErr = w.loadSandboxes(ctx)
	return w, w.sandboxErr
}

// Root is the workspace's root directory.
func (w *Workspace) Root() string { return w.root }

// HasBasis reports whether the root holds a .basis directory. Without
// one — none was found from [Options.Dir] up, or the named root has none —
// the workspace declares no tools and has no rules of its own; a host
// says so, since the user may have meant another directory.
func (w *Workspace) HasBasis() bool { return w.hasBasis }

// ConfigDir is the operator's configuration directory.
func (w *Workspace) ConfigDir() string { return w.configDir }

// Environ is the environment the workspace was opened with; programs
// inherit of it what [Workspace.PassEnv] and the bindings let through.
func (w *Workspace) Environ() []string { return w.environ }

// PassEnv is the operator's "pass_env" (sandbox.json): the
// credential-looking variables every program inherits all the same. A
// binding the host makes (spawn, an MCP manager, a hook approver) takes it.
func (w *Workspace) PassEnv() []string { return w.sandboxes.passEnv() }

// getenv reads the workspace's environment.
func (w *Workspace) getenv(name string) string {
	v, _ := subprocess.LookupEnv(w.environ, name)
	return v
}

// resolveConfigDir: the option, else $BASIS_CONFIG_DIR, else
// $XDG_CONFIG_HOME/basis, else ~/.config/basis.
func resolveConfigDir(option, dir string, getenv func(string) string) (string, error) {
	switch {
	case option != "":
		return absFrom(dir, option), nil
	case getenv(ConfigDirEnv) != "":
		return absFrom(dir, getenv(ConfigDirEnv)), nil
	case getenv("XDG_CONFIG_HOME") != "":
		return filepath.Join(absFrom(dir, getenv("XDG_CONFIG_HOME")), "basis"), nil
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".config", "basis"), nil
	}
	return "", errors.New("cannot find the configuration directory: HOME is not set; pass --config-dir DIR or set " + ConfigDirEnv)
}

func absFrom(base, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(base, path)
}

// DisplayPath shows a path relative to the root when it is inside the
// workspace, and with ~ for the home directory otherwise, as basis's
// messages do.
func (w *Workspace) DisplayPath(p string) string {
	if rel, err := filepath.Rel(w.root, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	if home := w.getenv("HOME"); home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// declaredOptions says where the manifests are, what their programs'
// environment is made of and how they are confined.
func (w *Workspace) declaredOptions() *declared.Options {
	return &declared.Options{
		ConfigDir: w.configDir,
		Environ:   w.environ, // ${VAR}s read all of it; programs inherit what PassEnv lets through
		PassEnv:   w.PassEnv(),
		// spawn's name stays basis's, whether this host offers spawn or not.
		Reserved: []string{contract.SpawnName},
		Sandbox:  w.Sandbox(),
		// Only declared tools may ask to be read-only: spawn's commands
		// and MCP servers never get this hook.
		ReadOnlySandbox: w.ReadOnlySandbox(),
		DeferSchemas:    w.deferSchemas,
	}
}

// Declared loads the declared tools of the workspace's and the
// operator's manifests, their programs confined by [Workspace.Sandbox]. A
// tool that is unavailable here (an unset ${VAR}) is returned all the
// same: a call to it is refused with the reason.
func (w *Workspace) Declared(ctx context.Context) ([]*declared.Tool, error) {
	return declared.Load(ctx, w.root, w.declaredOptions())
}

// Manifests lists the manifests [Workspace.Declared] reads that exist.
func (w *Workspace) Manifests() ([]string, error) {
	return declared.Discover(w.root, w.declaredOptions())
}

// ConfigFiles lists every file the workspace's tools, gate and sandbox are
// made from, present or not: a host that serves for long (basis serve)
// rebuilds its runtime when one of them changes.
func (w *Workspace) ConfigFiles() []string {
	return []string{
		filepath.Join(w.root, declared.WorkspaceFile),
		filepath.Join(w.configDir, declared.GlobalFile),
		w.OperatorRules().Path,
		w.WorkspaceRulesPath(),
		w.SystemRulesPath(),
		filepath.Join(w.configDir, sandbox.ConfigFile),
		filepath.Join(w.root, workspaceSandboxFile),
	}
}

// RuntimeOptions say what [Workspace.Runtime] builds besides the
// workspace's declared tools.
type RuntimeOptions struct {
	// Approver answers a call no rule decides (see [Workspace.Gate]); nil
	// denies it.
	Approver approver.Approver
	// Gate, when set, is used instead of one built from Approver: a host
	// that built it with [Workspace.Gate] already.
	Gate *approver.Gate
	// Tools are the host's own tools (spawn, say), registered before the
	// declared ones.
	Tools []contract.ExecutableTool
	// Declared are the declared tools to register. Nil loads them with
	// [Workspace.Declared]; a host that wants to look at them itself
	// loads them first and passes them here.
	Declared []*declared.Tool
	// MCPTools, when set, returns the tools of the host's MCP servers. It
	// is called only once every other tool loaded without a problem, so
	// no server starts for a roster that cannot be built.
	MCPTools func(ctx context.Context) ([]contract.ExecutableTool, error)
	// Audit names a file the audit log is appended to (see
	// [Workspace.OpenAudit]); it stays open until [Workspace.Close].
	// AuditWriter is a writer of the host's own instead; set one at most.
	Audit       string
	AuditWriter io.Writer
	// OnAuditError, DefaultTimeout and MaxParallel are the runtime's
	// options of those names.
	OnAuditError   func(error)
	DefaultTimeout time.Duration
	MaxParallel    int
	// Observer is the runtime's [runtime.Options.Observer]: tracing and
	// metrics (the otelbasis module makes one); nil, none.
	Observer runtime.Observer
}

// Runtime builds the runtime of this workspace: the host's tools, the
// declared tools and the MCP tools, behind a gate of every rule layer,
// every program confined. Every problem is returned, errors.Join'ed.
func (w *Workspace) Runtime(ctx context.Context, opts *RuntimeOptions) (*runtime.Runtime, error) {
	if opts == nil {
		opts = &RuntimeOptions{}
	}
	if opts.Audit != "" && opts.AuditWriter != nil {
		return nil, errors.New("workspace: RuntimeOptions.Audit and AuditWriter are both set; set one")
	}
	ro := &runtime.Options{Gate: opts.Gate, Audit: opts.AuditWriter, OnAuditError: opts.OnAuditError,
		DefaultTimeout: opts.DefaultTimeout, MaxParallel: opts.MaxParallel, Observer: opts.Observer}
	var errs []error
	if w.sandboxErr != nil {
		errs = append(errs, w.sandboxErr)
	}
	if ro.Gate == nil {
		gate, err := w.Gate(ctx, opts.Approver)
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
		ro.Gate = gate
	}
	b := runtime.NewBuilder()
	if err := b.Add(opts.Tools...); err != nil {
		errs = append(errs, err)
	}
	tools := opts.Declared
	if tools == nil {
		var err error
		if tools, err = w.Declared(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.Add(runtime.Tools(tools)...); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 && opts.MCPTools != nil {
		mcp, err := opts.MCPTools(ctx)
		if err != nil {
			errs = append(errs, err)
		} else if len(mcp) > 0 {
			if err := b.AddMCP(mcp...); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if opts.Audit != "" {
		f, err := w.OpenAudit(opts.Audit)
		if err != nil {
			return nil, fmt.Errorf("cannot open the audit file %s: %w", opts.Audit, err)
		}
		w.mu.Lock()
		w.closer = append(w.closer, f)
		w.mu.Unlock()
		ro.Audit = f
	}
	return b.Build(ro)
}

// Close closes the audit files [Workspace.Runtime] opened.
func (w *Workspace) Close() error {
	w.mu.Lock()
	closers := w.closer
	w.closer = nil
	w.mu.Unlock()
	var errs []error
	for _, c := range slices.Backward(closers) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
