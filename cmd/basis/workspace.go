package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/spawn"
	basisws "github.com/basis-go/basis/workspace"
)

// envDelegate names the program that takes spawn's tasks.
const envDelegate = "BASIS_DELEGATE"

// workspace is what one invocation works on: the workspace library's
// Workspace, and what the command line adds to it.
type workspace struct {
	ws *basisws.Workspace
	// openErr is what is wrong with the sandbox configs; reported where
	// the roster is built, and nothing runs.
	openErr   error
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
	// mcpStart says which MCP servers build starts and registers; mcpTool
	// is the tool whose server mcpForTool starts.
	mcpStart mcpStart
	mcpTool  string
	// elicit is how a server's questions during a call are answered
	// (call --elicit); empty declines them.
	elicit elicitMode
	// mcpState is this invocation's MCP client; with -tags nomcp it is
	// empty.
	mcpState
	// tel is this invocation's OpenTelemetry, nil when not exported: the
	// MCP client's requests are observed with it.
	tel *telemetry
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
// delegation depth and the delegate, and reads the sandbox configs. Its
// errors are configuration errors.
func openWorkspace(ctx context.Context, g *globals, e *env) (*workspace, error) {
	cwd, err := e.getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot tell the current directory (%v); pass the workspace with -C DIR", err)
	}
	w := &workspace{g: g, e: e, cwd: cwd}
	opts := &basisws.Options{Dir: cwd, Environ: e.environ, DeferSchemas: !g.allSchemas}
	if g.dir != "" {
		// -C names the root exactly: no walking up, and the operator's
		// naming it is the trust a foreign owner would otherwise need.
		opts.Root = g.dir // taken from cwd when relative
	}
	opts.ConfigDir = g.configDir // taken from cwd when relative
	if w.ws, w.openErr = basisws.Open(ctx, opts); w.ws == nil {
		if errors.As(w.openErr, new(*basisws.RootError)) {
			return nil, fmt.Errorf("-C %w", w.openErr)
		}
		return nil, w.openErr
	}
	w.root, w.configDir = w.ws.Root(), w.ws.ConfigDir()
	if !w.ws.HasBasis() {
		// Said once, since the user may be in the wrong directory.
		if g.dir != "" {
			fmt.Fprintf(e.stderr, "basis: %s has no .basis/; it is the workspace, with no declared tools (basis init declares some)\n", w.root)
		} else {
			fmt.Fprintf(e.stderr, "basis: no .basis/ found from %s up; the workspace is %s, with no declared tools (basis init declares some, -C DIR names another workspace)\n", cwd, w.root)
		}
	}
	if w.depth, err = spawn.DepthFrom(e.environ); err != nil {
		return nil, err
	}
	delegate := g.delegate
	if delegate == "" {
		delegate = e.getenv(envDelegate)
	}
	if w.delegate, err = spawn.SplitArgv(delegate); err != nil {
		flag := "--delegate"
		if g.delegate == "" {
			flag = "$" + envDelegate
		}
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return w, nil
}

func absFrom(base, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(base, path)
}

// spawnTool builds the spawn tool this invocation offers.
func (w *workspace) spawnTool() (*spawn.Tool, error) {
	return spawn.New(w.root, &spawn.Options{Environ: w.e.environ, NoShell: w.g.noShell, Sandbox: w.ws.Sandbox(), DelegateArgv: w.delegate})
}

// build loads everything and builds the runtime: spawn, then the
// workspace's declared tools, then the MCP tools. Every problem found is
// returned, not only the first, so `check` can list them all. A declared
// tool that is unavailable here (an unset ${VAR}) is registered all the
// same: it is listed, and a call to it is refused with the reason. Without
// options, the runtime's gate knows no rule and denies: the commands that
// build it so make no call.
func (w *workspace) build(ctx context.Context, opts *runtime.Options) (*runtime.Runtime, []error) {
	var errs []error
	if w.openErr != nil {
		errs = append(errs, basisws.Problems(w.openErr)...)
	}
	var host []contract.ExecutableTool
	if sp, err := w.spawnTool(); err != nil {
		errs = append(errs, err)
	} else {
		host = append(host, sp)
	}
	tools, err := w.ws.Declared(ctx)
	if err != nil {
		errs = append(errs, basisws.Problems(err)...)
	}
	w.declared = tools
	if len(errs) > 0 {
		return nil, errs
	}
	if opts == nil {
		gate, err := approver.NewGate(approver.DenyAll(), nil)
		if err != nil {
			return nil, []error{err}
		}
		opts = &runtime.Options{Gate: gate}
	}
	rt, err := w.ws.Runtime(ctx, &basisws.RuntimeOptions{
		Gate:         opts.Gate,
		Tools:        host,
		Declared:     append([]*declared.Tool{}, tools...), // never nil: loaded already
		MCPTools:     w.mcpTools,
		AuditWriter:  opts.Audit,
		OnAuditError: opts.OnAuditError,
		Observer:     opts.Observer,
	})
	if err != nil {
		return nil, basisws.Problems(err)
	}
	return rt, nil
}

// displayPath shows a path relative to the workspace root when it is
// inside it, and with ~ for the home directory otherwise.
func (w *workspace) displayPath(p string) string { return w.ws.DisplayPath(p) }

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

// newGate builds the gate for one invocation: every layer's rules, and
// "always" answers saved to the operator's rules file (the terminal
// saves its own, so it is told where).
func (w *workspace) newGate(ctx context.Context, appr approver.Approver) (*approver.Gate, []error) {
	if t, ok := appr.(*terminal.Terminal); ok {
		t.SaveTo = w.ws.OperatorRules().Path
	}
	gate, err := w.ws.Gate(ctx, appr)
	if err != nil {
		return nil, basisws.Problems(err)
	}
	return gate, nil
}

// openAudit opens the --audit file of command cmd (see
// Workspace.OpenAudit); path is relative to the directory basis was
// started in. A code of 0 or more is the exit status to return.
func (w *workspace) openAudit(cmd, path string) (*os.File, int) {
	if w.openErr != nil {
		return nil, configErr(w.e, basisws.Problems(w.openErr))
	}
	f, err := w.ws.OpenAudit(path)
	if err != nil {
		return nil, usageErr(w.e, "%s: cannot open the audit file %s: %v", cmd, path, err)
	}
	return f, -1
}
