//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	basisws "github.com/basis-go/basis/workspace"
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
			if err := mcpserve.CheckLoopback(*httpAddr); errors.Is(err, mcpserve.ErrNotLoopback) {
				return usageErr(e, "serve: --http %s is not a loopback address; listen on 127.0.0.1:PORT, or pass --allow-remote to serve other machines (anyone who has the token can then run tools here)", *httpAddr)
			} else if err != nil {
				return usageErr(e, "serve: --http %s: give host:port, such as 127.0.0.1:8765", *httpAddr)
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
	log := mcpserve.LineLogger(e.stderr, "basis serve: ")
	var audit io.Writer
	if *auditPath != "" {
		f, code := w.openAudit("serve", *auditPath)
		if code >= 0 {
			return code
		}
		defer f.Close()
		audit = f
	}
	tel := startTelemetry(ctx, e)
	defer tel.close()
	w.tel = tel
	// build makes a runtime from the files as they are now, with a gate
	// that has read the rules as they are now.
	build := func(ctx context.Context, mcpTools func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error) {
		gate, errs := w.newGate(ctx, appr)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		opts := &runtime.Options{Gate: gate, Observer: tel.observer()}
		if audit != nil {
			opts.Audit = audit
			opts.OnAuditError = func(err error) { log.Info(fmt.Sprintf("writing the audit record failed: %v", err)) }
		}
		w.mcpStart, w.mcpFrom = mcpAll, mcpTools
		rt, errs := w.build(ctx, opts)
		return rt, errors.Join(errs...)
	}
	gopts := &mcpserve.GatewayOptions{
		Watch:       w.ws.ConfigFiles(),
		ClientFiles: mcphost.ClientFiles(w.root, w.configDir),
		Interval:    reloadInterval,
		Depth:       w.depth,
		Logger:      log,
		DisplayPath: w.displayPath,
	}
	if !g.noMCP {
		gopts.Open = w.openMCP
	}
	if obs, ok := tel.observer().(mcpserve.RequestObserver); ok {
		gopts.Observer = obs
	}
	gw, err := mcpserve.NewGateway(ctx, build, gopts)
	if err != nil {
		return configErr(e, basisws.Problems(err))
	}
	defer gw.Close()

	if *httpAddr == "" {
		if err := gw.Serve(ctx, mcpserve.StdioTransport(e.stdin, e.stdout)); err != nil && ctx.Err() == nil {
			log.Info(err.Error())
			return exitFailed
		}
		return exitOK
	}
	if token == "" {
		token = mcpserve.NewToken()
		log.Info(fmt.Sprintf("the bearer token for this run is %s (set $%s to choose one)", token, envServeToken))
	}
	err = gw.ListenAndServe(ctx, mcpserve.HTTPOptions{
		Addr:        *httpAddr,
		Token:       token,
		AllowRemote: *allowRemote,
		Listening: func(addr net.Addr) {
			log.Info(fmt.Sprintf("serving MCP at http://%s/ (streamable HTTP; send Authorization: Bearer TOKEN)", addr))
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

// serveApprover maps serve's --approve to an approver: elicit asks the
// MCP client's user; allow, deny and hook:ARGV are call's.
func serveApprover(ctx context.Context, mode string, w *workspace, e *env) (approver.Approver, error) {
	switch mode {
	case "elicit":
		// A client that cannot ask gets a denial naming the command that
		// allows the call for good.
		return mcpserve.ElicitApprover(basisws.AllowCommand), nil
	case "prompt", "":
		return nil, fmt.Errorf("--approve %s: basis serve has no terminal to ask at; want elicit, allow, deny or hook:ARGV", mode)
	}
	appr, err := chooseApprover(ctx, mode, w, e)
	if err != nil {
		return nil, fmt.Errorf("--approve %s: want elicit, allow, deny or hook:ARGV", mode)
	}
	return appr, nil
}
