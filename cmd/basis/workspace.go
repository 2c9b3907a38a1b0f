package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/spawn"
)

// Environment variables basis reads.
const (
	envConfigDir = "BASIS_CONFIG_DIR"
	envDelegate  = "BASIS_DELEGATE"
)

// workspace is what one invocation works on: a root, a config directory,
// and the process's environment.
type workspace struct {
	root      string
	configDir string
	depth     int
	delegate  []string
	g         *globals
	e         *env
	// declared holds the declared tools the last build loaded, for the
	// commands that report on them (tools, check).
	declared []*declared.Tool
	// cwd is the directory basis was started in, for relative paths given
	// on the command line.
	cwd string
	// sandboxes confines the programs of spawn and the declared tools;
	// set by build.
	sandboxes *sandboxes
	// mcpStart says which MCP servers build starts and registers; mcpTool
	// is the tool whose server mcpForTool starts.
	mcpStart mcpStart
	mcpTool  string
	// mcpState is this invocation's MCP client; with -tags nomcp it is
	// empty.
	mcpState
}

// mcpStart says which MCP servers a command starts.
type mcpStart int

const (
	// mcpNone starts no server and registers no MCP tool: check reads
	// the config files only.
	mcpNone mcpStart = iota
	// mcpAll starts every trusted server, concurrently: tools, check
	// --start, serve.
	mcpAll
	// mcpForTool starts only the server of workspace.mcpTool, if it is
	// an MCP tool: call and explain.
	mcpForTool
)

// openWorkspace resolves the root, the config directory, the starting
// delegation depth and the delegate. Its errors are configuration errors.
func openWorkspace(g *globals, e *env) (*workspace, error) {
	cwd, err := e.getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot tell the current directory (%v); pass the workspace with -C DIR", err)
	}
	w := &workspace{g: g, e: e, cwd: cwd}
	if g.dir != "" {
		// -C names the root exactly: no walking up, and the operator's
		// naming it is the trust a foreign owner would otherwise need.
		w.root = absFrom(cwd, g.dir)
		info, err := os.Stat(w.root)
		if err != nil || !info.IsDir() {
			return nil, fmt.Errorf("-C %s: not a directory; give the workspace's root directory", g.dir)
		}
	} else if w.root, err = findRoot(cwd, e); err != nil {
		return nil, err
	}
	if w.configDir, err = resolveConfigDir(g.configDir, cwd, e); err != nil {
		return nil, err
	}
	if text := e.getenv(spawn.DepthEnv); text != "" {
		d, err := strconv.Atoi(text)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s must be a whole number, 0 or more; unset it to start at depth 0", spawn.DepthEnv)
		}
		w.depth = d
	}
	delegate := g.delegate
	if delegate == "" {
		delegate = e.getenv(envDelegate)
	}
	if w.delegate, err = splitArgv(delegate); err != nil {
		flag := "--delegate"
		if g.delegate == "" {
			flag = "$" + envDelegate
		}
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return w, nil
}

// resolveConfigDir: --config-dir, else $BASIS_CONFIG_DIR, else
// $XDG_CONFIG_HOME/basis, else ~/.config/basis.
func resolveConfigDir(flagValue, cwd string, e *env) (string, error) {
	switch {
	case flagValue != "":
		return absFrom(cwd, flagValue), nil
	case e.getenv(envConfigDir) != "":
		return absFrom(cwd, e.getenv(envConfigDir)), nil
	case e.getenv("XDG_CONFIG_HOME") != "":
		return filepath.Join(absFrom(cwd, e.getenv("XDG_CONFIG_HOME")), "basis"), nil
	case e.getenv("HOME") != "":
		return filepath.Join(e.getenv("HOME"), ".config", "basis"), nil
	}
	return "", errors.New("cannot find the configuration directory: HOME is not set; pass --config-dir DIR or set " + envConfigDir)
}

func absFrom(base, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(base, path)
}

func (w *workspace) operatorRules() *approver.RulesFile {
	return &approver.RulesFile{Path: filepath.Join(w.configDir, approver.OperatorRulesFile)}
}

func (w *workspace) workspaceRulesPath() string {
	return filepath.Join(w.root, approver.WorkspaceRulesFile)
}

// spawnTool builds the spawn tool this invocation offers.
func (w *workspace) spawnTool() (*spawn.Tool, error) {
	cfg := spawn.Options{Environ: w.e.environ, NoShell: w.g.noShell}
	if w.sandboxes != nil {
		cfg.Sandbox = w.sandboxes.confine
	}
	if len(w.delegate) > 0 {
		cfg.Delegator = spawn.CommandDelegator{Argv: w.delegate, Dir: w.root, Env: w.e.environ}
	}
	return spawn.New(w.root, &cfg)
}

// declaredOptions says where the global manifest is and what the
// programs' environment is made of.
func (w *workspace) declaredOptions() *declared.Options {
	cfg := &declared.Options{
		ConfigDir: w.configDir,
		Environ:   w.e.environ, // ${VAR}s read all of it; programs inherit what PassEnv lets through
		PassEnv:   w.sandboxes.passEnv(),
		Reserved:  []string{contract.SpawnName},
	}
	if w.sandboxes != nil {
		cfg.Sandbox = w.sandboxes.confine
	}
	return cfg
}

// declaredTools loads the workspace's and the config directory's manifests.
func (w *workspace) declaredTools(ctx context.Context) ([]*declared.Tool, error) {
	return declared.Load(ctx, w.root, w.declaredOptions())
}

// build loads everything and builds the runtime. Every problem found is
// returned, not only the first, so `check` can list them all. A declared
// tool that is unavailable here (an unset ${VAR}) is registered all the
// same: it is listed, and a call to it is refused with the reason. The
// programs of spawn and the declared tools run sandboxed as the
// sandbox.json files say (workspace-write without the network when there
// are none).
func (w *workspace) build(ctx context.Context, opts *runtime.Options) (*runtime.Runtime, []error) {
	sandboxes, errs := w.loadSandboxes(ctx)
	w.sandboxes = sandboxes
	b := runtime.NewBuilder()
	sp, err := w.spawnTool()
	if err != nil {
		errs = append(errs, err)
	} else if err := b.Add(sp); err != nil {
		errs = append(errs, problems(err)...)
	}
	tools, err := w.declaredTools(ctx)
	if err != nil {
		errs = append(errs, problems(err)...)
	} else if err := b.Add(runtime.Tools(tools)...); err != nil {
		errs = append(errs, problems(err)...)
	}
	w.declared = tools
	if len(errs) == 0 {
		// Servers are started only for a roster that can be built.
		errs = append(errs, w.addMCP(ctx, b)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	rt, err := b.Build(opts)
	if err != nil {
		return nil, problems(err)
	}
	return rt, nil
}

// problems splits an error joined from several problems into them. A
// problem is one line; a joined error is several.
func problems(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || !strings.Contains(err.Error(), "\n") {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, problems(e)...)
	}
	return out
}

// displayPath shows a path relative to the workspace root when it is
// inside it, and with ~ for the home directory otherwise.
func (w *workspace) displayPath(p string) string {
	if rel, err := filepath.Rel(w.root, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	if home := w.e.getenv("HOME"); home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// configErr prints configuration problems, one per line, and returns
// exitUsage.
func configErr(e *env, errs []error) int {
	for _, err := range errs {
		fmt.Fprintf(e.stderr, "basis: %v\n", err)
	}
	if len(errs) > 0 {
		fmt.Fprintln(e.stderr, "basis: fix the configuration above (basis check lists every problem), then run again")
	}
	return exitUsage
}
