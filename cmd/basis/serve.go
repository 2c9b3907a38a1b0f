//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	basisws "github.com/basis-go/basis/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envServeToken is the bearer token basis serve --http requires; without
// it, a token is made for the run.
const envServeToken = "BASIS_SERVE_TOKEN"

// reloadInterval is how often basis serve looks at its config files. A
// variable only so that the tests' build of basis (serve_testinterval.go)
// looks often: a test that edits a file then waits for the reload, not
// for the interval.
var reloadInterval = time.Second

const serveHelp = `Serves every tool of this workspace — spawn, the declared tools and the tools
of every trusted MCP server — as an MCP server, over stdio (the default) or
streamable HTTP. Every call goes through the same pipeline as basis call;
what goes wrong comes back as a tool result with isError set. When the
tools.json, .mcp.json, rules or sandbox files change, the tools are
reloaded and the client is told; an edit that breaks them keeps the last
good tools and says why on stderr. Log lines go to stderr only.

  --approve elicit|allow|deny|hook:ARGV
        who approves a call that no rule answers: the MCP client's user,
        asked through a form (elicit, the default; a client that cannot
        show one gets a denial saying how to allow the call), allow, deny,
        or a program, as in basis call
  --http ADDR
        serve streamable HTTP on ADDR (host:port) instead of stdio; every
        request needs "Authorization: Bearer TOKEN", where TOKEN is
        $BASIS_SERVE_TOKEN, or one made for the run and printed on stderr
  --allow-remote
        allow an --http address that is not loopback
  --audit FILE
        append the audit log to FILE as JSON lines: a record of each call
        as its tool is about to run, and one of how it ended; a call that
        would change something is refused when its record cannot be written.
        Inside the workspace (or another directory sandboxed programs may
        write) FILE is reached through no symbolic link.

Use it from an MCP client with:
  {"mcpServers": {"basis": {"command": "basis", "args": ["-C", "/path/to/repo", "serve"]}}}
`

func cmdServe(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("serve", "serve [--approve elicit|allow|deny|hook:ARGV] [--http ADDR] [--allow-remote] [--audit FILE]", serveHelp)
	approve := c.fs.String("approve", "elicit", "")
	httpAddr := c.fs.String("http", "", "")
	allowRemote := c.fs.Bool("allow-remote", false, "")
	auditPath := c.fs.String("audit", "", "")
	if _, code := c.parseArgs(args, 0, 0, e); code >= 0 {
		return code
	}
	token := ""
	if *httpAddr != "" {
		if !*allowRemote {
			if err := mcpserve.CheckLoopback(*httpAddr); err != nil {
				return usageErr(e, "serve: --http %s: %v; listen on 127.0.0.1:PORT, or pass --allow-remote to serve other machines (anyone who has the token can then run tools here)", *httpAddr, err)
			}
		}
		token = e.getenv(envServeToken)
		if token != "" && len(token) < mcpserve.MinTokenLen {
			return usageErr(e, "serve: $%s is shorter than %d characters; set a longer one, or unset it to have a token made for this run", envServeToken, mcpserve.MinTokenLen)
		}
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	appr, err := serveApprover(ctx, *approve, w, e)
	if err != nil {
		return usageErr(e, "serve: %v", err)
	}
	log := &lockedWriter{w: e.stderr}
	s := &serving{w: w, appr: appr, log: log, roster: &mcpserve.RuntimeRoster{Depth: w.depth}}
	if *auditPath != "" {
		f, code := w.openAudit("serve", *auditPath)
		if code >= 0 {
			return code
		}
		defer f.Close()
		s.audit = f
	}
	w.mcpStart = mcpAll
	w.onMCPChange = s.mcpToolsChanged
	w.serverRequest = mcpserve.Forward
	s.stamps = s.configStamps()
	rt, errs := s.build(ctx)
	if errs != nil {
		w.closeMCP()
		return configErr(e, errs)
	}
	defer func() {
		// Closed outside the lock: a server's changed tools wait for it.
		s.mu.Lock()
		c := w.mcp
		s.mu.Unlock()
		closeClient(c)
	}()
	s.roster.Store(rt)
	s.logMCP()
	s.srv = mcpserve.NewServer(s.roster, &mcpserve.ServerOptions{Logger: slog.New(lineHandler{log}),
		Surfaces: &mcpserve.GatewaySurfaces{Manager: s.manager, Runtime: s.roster.Load, Depth: w.depth}})

	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		s.watch(watchCtx)
	}()
	defer func() {
		stopWatching()
		<-watched
	}()

	if *httpAddr == "" {
		if err := s.srv.Serve(ctx, stdioTransport(e)); err != nil && ctx.Err() == nil {
			fmt.Fprintf(log, "basis serve: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if token == "" {
		token = mcpserve.NewToken()
		fmt.Fprintf(log, "basis serve: the bearer token for this run is %s (set $%s to choose one)\n", token, envServeToken)
	}
	err = s.srv.ListenAndServe(ctx, mcpserve.HTTPOptions{
		Addr:        *httpAddr,
		Token:       token,
		AllowRemote: *allowRemote,
		Listening: func(addr net.Addr) {
			fmt.Fprintf(log, "basis serve: serving MCP at http://%s/ (streamable HTTP; send Authorization: Bearer TOKEN)\n", addr)
		},
	})
	switch {
	case errors.Is(err, mcpserve.ErrNotLoopback):
		return usageErr(e, "serve: --http %s: %v; listen on 127.0.0.1:PORT, or pass --allow-remote", *httpAddr, err)
	case err != nil && ctx.Err() == nil:
		return usageErr(e, "serve: %v", err)
	}
	return exitOK
}

// stdioTransport speaks MCP over basis's own stdin and stdout.
func stdioTransport(e *env) mcp.Transport {
	if e.stdin == os.Stdin && e.stdout == os.Stdout {
		return &mcp.StdioTransport{}
	}
	return &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lockedWriter serialises the log lines of concurrent calls.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineHandler prints each log record of the MCP server as a line of
// basis serve's stderr.
type lineHandler struct{ w io.Writer }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lineHandler) WithGroup(string) slog.Handler            { return h }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	_, err := fmt.Fprintf(h.w, "basis serve: %s\n", r.Message)
	return err
}

// serving is one basis serve: the workspace, the roster it serves and
// what reloads it.
type serving struct {
	w      *workspace
	appr   approver.Approver
	audit  io.Writer
	log    io.Writer
	roster *mcpserve.RuntimeRoster
	srv    *mcpserve.Server
	// mu guards w and stamps: a reload and an MCP server's changed
	// tools do not run side by side.
	mu     sync.Mutex
	stamps basisws.Stamps
}

// build makes a runtime from the files as they are now, with a gate that
// has read the rules as they are now.
func (s *serving) build(ctx context.Context) (*runtime.Runtime, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buildLocked(ctx)
}

func (s *serving) buildLocked(ctx context.Context) (*runtime.Runtime, []error) {
	gate, errs := s.w.newGate(ctx, s.appr)
	if len(errs) > 0 {
		return nil, errs
	}
	opts := &runtime.Options{Gate: gate}
	if s.audit != nil {
		opts.Audit = s.audit
		opts.OnAuditError = func(err error) { fmt.Fprintf(s.log, "basis serve: writing the audit record failed: %v\n", err) }
	}
	return s.w.build(ctx, opts)
}

// logMCP says how each MCP server is doing, and which config problems
// left servers out.
func (s *serving) logMCP() {
	for _, n := range s.w.mcpNotes() {
		fmt.Fprintf(s.log, "basis serve: %s\n", n)
	}
	for _, row := range s.w.mcpServerRows() {
		fmt.Fprintf(s.log, "basis serve: MCP server %s (%s): %s\n", row.Name, row.Source, oneLine(row.Status))
	}
}

// mcpToolsChanged replaces a proxied server's tools in the served roster
// when the server says they changed.
func (s *serving) mcpToolsChanged(c *mcpbind.Manager, source string, tools []contract.ExecutableTool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.roster.Load()
	if c != s.w.mcp || rt == nil {
		return // a client a reload replaced, or a roster not served yet
	}
	if err := rt.ReplaceMCPSource(source, tools); err != nil {
		fmt.Fprintf(s.log, "basis serve: the new tools of %s are not served: %v\n", source, err)
	}
}

// watch reloads the roster when a config file changes, until ctx is
// done; the server follows the runtime's own changes.
func (s *serving) watch(ctx context.Context) {
	tick := time.NewTicker(reloadInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.reloadIfChanged(ctx)
		}
	}
}

// reloadIfChanged rebuilds the roster when a config file changed. A
// proxied MCP server keeps running unless the MCP config files changed.
// A broken edit keeps the last good roster and says why on stderr.
func (s *serving) reloadIfChanged(ctx context.Context) {
	// A replaced MCP client is closed after the lock is given up: its
	// servers' changed tools wait for the lock.
	var stale *mcpbind.Manager
	defer func() { closeClient(stale) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.configStamps()
	changed := s.stamps.Changed(now)
	if len(changed) == 0 {
		return
	}
	mcpChanged := slices.ContainsFunc(changed, isMCPConfig)
	s.stamps = now
	old := s.w.mcp
	if mcpChanged {
		s.w.mcp = nil
	}
	rt, errs := s.buildLocked(ctx)
	if errs != nil {
		for _, err := range errs {
			fmt.Fprintf(s.log, "basis serve: reload: %v\n", err)
		}
		fmt.Fprintln(s.log, "basis serve: the configuration has problems (basis check lists them); still serving the tools from before the edit")
		if mcpChanged {
			stale, s.w.mcp = s.w.mcp, old
		}
		return
	}
	s.roster.Store(rt)
	if mcpChanged {
		stale = old
	}
	fmt.Fprintf(s.log, "basis serve: reloaded: %d tools\n", len(rt.Tools()))
	if mcpChanged {
		s.logMCP()
	}
	s.srv.Refresh()
}

// configStamps stamps every file the roster and the gate are made from.
func (s *serving) configStamps() basisws.Stamps {
	w := s.w
	return w.ws.Stamp(
		filepath.Join(w.root, mcpbind.WorkspaceFileName),
		filepath.Join(w.configDir, mcpbind.OperatorFileName),
		filepath.Join(w.configDir, mcpbind.TrustFileName))
}

// isMCPConfig reports whether path is one the MCP client is made from.
func isMCPConfig(path string) bool {
	switch filepath.Base(path) {
	case mcpbind.WorkspaceFileName, mcpbind.OperatorFileName, mcpbind.TrustFileName:
		return true
	}
	return false
}

// serveApprover maps serve's --approve to an approver: elicit asks the
// MCP client's user; allow, deny and hook:ARGV are call's.
func serveApprover(ctx context.Context, mode string, w *workspace, e *env) (approver.Approver, error) {
	switch mode {
	case "elicit":
		// A client that cannot ask gets a denial naming the command that
		// allows the call for good.
		return mcpserve.ElicitApprover(serveAllowHint), nil
	case "prompt", "":
		return nil, fmt.Errorf("--approve %s: basis serve has no terminal to ask at; want elicit, allow, deny or hook:ARGV", mode)
	}
	appr, err := chooseApprover(ctx, mode, w, e)
	if err != nil {
		return nil, fmt.Errorf("--approve %s: want elicit, allow, deny or hook:ARGV", mode)
	}
	return appr, nil
}
