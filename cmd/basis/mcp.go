//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	basisws "github.com/basis-go/basis/workspace"
)

// mcpInBuild reports whether this binary can load MCP servers; a binary
// built with -tags nomcp holds no MCP code at all.
const mcpInBuild = true

// mcpState is a workspace's MCP client and who hears of its changes.
type mcpState struct {
	// mcp is this invocation's MCP client, made by the first build that
	// needs it and kept by later ones; closeMCP stops its servers.
	mcp *mcpbind.Manager
	// mcpStartErr is why the server mcpForTool asked for gave no tools.
	mcpStartErr error
	// mcpFrom, when set, gives the MCP tools instead (basis serve's
	// gateway, which keeps its own client).
	mcpFrom func(context.Context) ([]contract.ExecutableTool, error)
}

// openMCP opens the MCP client of the config files, starting nothing,
// with opts (nil: none) and what the workspace and the command add.
func (w *workspace) openMCP(ctx context.Context, opts *mcpbind.ManagerOptions) *mcpbind.Manager {
	if opts == nil {
		opts = &mcpbind.ManagerOptions{}
	}
	if w.tel != nil && w.tel.obs != nil {
		opts.Observer = w.tel.obs
	}
	if opts.SignIn == nil {
		opts.SignIn = w.signInHook(false)
	}
	return mcphost.Open(ctx, w.ws, opts)
}

// mcpTools starts the MCP servers the command needs (workspace.mcpStart)
// and returns their tools. A server that fails to start, is untrusted,
// or is written in a way basis cannot use is no configuration problem
// here: it has no tools, and `basis tools` says why (basis check reports
// the last kind as errors).
func (w *workspace) mcpTools(ctx context.Context) ([]contract.ExecutableTool, error) {
	if w.g.noMCP || w.mcpStart == mcpNone {
		return nil, nil
	}
	if w.mcpFrom != nil {
		return w.mcpFrom(ctx)
	}
	// A tool of any name may be an MCP server's (tool_prefix): StartFor
	// starts the servers whose tools could be named so, and none else.
	if w.mcp == nil {
		w.mcp = w.openMCP(ctx, &mcpbind.ManagerOptions{ServerRequest: w.serverRequest()})
		switch w.mcpStart {
		case mcpAll:
			// Failures show in the servers' status.
			_ = w.mcp.StartAll(ctx)
		case mcpForTool:
			w.mcpStartErr = w.mcp.StartFor(ctx, w.mcpTool)
		}
	}
	return w.mcp.Tools(), nil
}

// serverRequest answers the servers' questions as w.elicit says; nil
// (no elicitation offered) when they are declined.
func (w *workspace) serverRequest() mcpbind.ServerRequestFunc {
	if w.elicit == "" {
		return nil
	}
	el := &elicitor{mode: w.elicit, tty: w.e.tty, environ: w.e.environ}
	return el.serverRequest()
}

// closeMCP stops every MCP server this invocation started.
func (w *workspace) closeMCP() { closeClient(w.mcp) }

// closeClient stops the client's servers; a nil client has none.
func closeClient(m *mcpbind.Manager) {
	if m != nil {
		m.Close()
	}
}

// mcpStartError is why the MCP tool a call names is not in the roster:
// its server is untrusted, unavailable, or failed to start; nil when
// there is no such reason. failed tells a server that could not start
// (the call could not start) from one that was refused.
func (w *workspace) mcpStartError() (err error, failed bool) {
	err = w.mcpStartErr
	return err, errors.Is(err, mcpbind.ErrStart) || errors.Is(err, mcpbind.ErrServerDied)
}

// mcpServerRows are the MCP servers `basis tools` lists below the tools,
// with how each is doing; none when no server is configured or MCP is
// off.
func (w *workspace) mcpServerRows() []mcpServerRow {
	if w.mcp == nil {
		return nil
	}
	var rows []mcpServerRow
	for _, s := range w.mcp.Status() {
		source := "host"
		if s.File != "" {
			source = w.displayPath(s.File)
		}
		rows = append(rows, mcpServerRow{Name: s.Server, Source: source, Status: s.String()})
	}
	return rows
}

// mcpNotes are the problems of the MCP config files that left a server
// (or a file) out; `basis check` lists them as errors.
func (w *workspace) mcpNotes() []string {
	if w.mcp == nil {
		return nil
	}
	var notes []string
	for _, err := range w.mcp.Problems() {
		notes = append(notes, fmt.Sprintf("%v; left out (basis check lists every problem)", err))
	}
	return notes
}

// mcpSandbox is what the SANDBOX column says of an MCP tool: its stdio
// server's sandbox, or "-" for a server that is no program basis starts.
func (w *workspace) mcpSandbox(source string) string {
	if w.mcp != nil {
		if name, ok := w.mcp.Config().StdioServer(source); ok {
			return w.ws.SandboxOf(mcpbind.SandboxName(name), true).String()
		}
	}
	return "-"
}

// mcpCheck validates the MCP config files — syntax, fields, variables —
// starting nothing; with start, it also starts each trusted server and
// lists its tools. It returns the problems, the lines to print, how many
// config files it read and how many tools the started servers have.
func (w *workspace) mcpCheck(ctx context.Context, start bool) (errs []error, lines []string, files, tools int) {
	if w.g.noMCP {
		return nil, nil, 0, 0
	}
	c := w.openMCP(ctx, nil)
	defer c.Close()
	problems, byServer := c.Check(ctx, start)
	for _, err := range problems {
		errs = append(errs, basisws.Problems(err)...)
	}
	for _, f := range c.Config().Files {
		switch f.Trust {
		case mcpbind.Untrusted:
			lines = append(lines, fmt.Sprintf("warning: %s: untrusted: its servers do not start until you run basis mcp trust", w.displayPath(f.Path)))
		case mcpbind.Changed:
			what := "it"
			if len(f.Changed) > 0 {
				what = w.changedFiles(f)
			}
			lines = append(lines, fmt.Sprintf("warning: %s: changed since it was trusted (%s): its servers do not start until you run basis mcp trust again", w.displayPath(f.Path), what))
		}
	}
	if !start {
		return errs, lines, len(c.Config().Files), 0
	}
	for _, names := range byServer {
		tools += len(names)
	}
	for _, s := range c.Status() {
		line := fmt.Sprintf("mcp server %s: %s", s.Server, s)
		if names := byServer[s.Server]; len(names) > 0 {
			line += ": " + strings.Join(names, ", ")
		}
		lines = append(lines, line)
	}
	return errs, lines, len(c.Config().Files), tools
}

// mcpRule reports whether a rule may be about an MCP server's tool.
func mcpRule(r approver.Rule) bool { return mcphost.MayBeServerTool(r.Tool, r.Source) }
