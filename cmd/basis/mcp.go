//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/subprocess"
)

// mcpInBuild reports whether this binary can load MCP servers; a binary
// built with -tags nomcp holds no MCP code at all.
const mcpInBuild = true

// mcpState is a workspace's MCP client and who hears of its changes.
type mcpState struct {
	// mcp is this invocation's MCP client, made by the first build that
	// needs it and kept by later ones; closeMCP stops its servers.
	mcp *mcpClient
	// onMCPChange, when set, is told that the tools of a server of client
	// changed, and what their source is (basis serve replaces them in its
	// roster).
	onMCPChange func(client *mcpClient, source string, tools []contract.ExecutableTool)
}

// mcpClient is one invocation's MCP client: the layered config files and
// the manager that runs their servers.
type mcpClient struct {
	cfg     *mcpbind.Config
	manager *mcpbind.Manager
	// startErr is why the server mcpForTool asked for gave no tools.
	startErr error
	// problems are what is wrong in the config files: each drops the
	// server it is about (or the file, when it is about the whole file),
	// and the others are used. basis check reports them as errors.
	problems []error
	mu       sync.Mutex
	// sources maps a server to its tools' source, so that a server whose
	// tools are all gone can still be replaced by nothing.
	sources map[string]string
}

// lookupEnv finds a ${VAR} in basis's environment.
func (w *workspace) lookupEnv(name string) (string, bool) {
	return subprocess.LookupEnv(w.e.environ, name)
}

// loadMCPConfig reads the workspace's .mcp.json and the operator's
// mcp.json. Every problem is one error.
func (w *workspace) loadMCPConfig(ctx context.Context) (*mcpbind.Config, []error) {
	cfg, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{Root: w.root, ConfigDir: w.configDir})
	if err != nil {
		return cfg, problems(err)
	}
	return cfg, nil
}

// newMCPClient loads the config files and makes the manager of their
// well-formed servers, starting nothing. The format is shared with other
// agents, so a server basis cannot use is left out, not fatal: it is one
// of the client's problems.
func (w *workspace) newMCPClient(ctx context.Context) (*mcpClient, []error) {
	cfg, errs := w.loadMCPConfig(ctx)
	if cfg == nil {
		return nil, errs
	}
	c := &mcpClient{cfg: cfg, sources: map[string]string{}, problems: errs}
	opts := &mcpbind.ManagerOptions{
		Lookup:  w.lookupEnv,
		Env:     w.e.environ, // stdio servers inherit what PassEnv lets through
		PassEnv: w.ws.PassEnv(),
		// The operator configured the server, so it has the network (it
		// talks to its service), but it writes only where the policy says;
		// a machine that cannot sandbox it as asked refuses to start it.
		Sandbox: w.ws.Sandbox(),
		// basis sweeps what its programs leave behind (ReapOrphans): a live
		// server is none of that.
		Track: subprocess.Track,
		OnToolsChanged: func(server string, tools []contract.ExecutableTool) {
			source, ok := c.source(server, tools)
			if ok && w.onMCPChange != nil {
				w.onMCPChange(c, source, tools)
			}
		},
	}
	c.manager = mcpbind.NewManager(cfg, opts)
	return c, nil
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
	if w.mcpStart == mcpForTool && !strings.HasPrefix(w.mcpTool, contract.MCPPrefix) {
		return nil, nil
	}
	if w.mcp == nil {
		c, errs := w.newMCPClient(ctx)
		if errs != nil {
			return nil, errors.Join(errs...)
		}
		w.mcp = c
		switch w.mcpStart {
		case mcpAll:
			// Failures show in the servers' status.
			_ = c.manager.StartAll(ctx)
		case mcpForTool:
			if server, ok := c.manager.ServerFor(w.mcpTool); ok {
				if _, err := c.manager.ServerTools(ctx, server); err != nil {
					c.startErr = err
				}
			}
		}
	}
	tools := w.mcp.manager.Tools()
	for _, t := range tools {
		w.mcp.source("", []contract.ExecutableTool{t})
	}
	return tools, nil
}

// source returns the source of server's tools, remembering it: from the
// tools when there are any, from memory when they are all gone.
func (c *mcpClient) source(server string, tools []contract.ExecutableTool) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(tools) > 0 {
		source := tools[0].Descriptor().Source
		name := server
		if name == "" {
			if i := strings.LastIndexByte(source, '#'); i >= 0 {
				name = source[i+1:]
			}
		}
		c.sources[name] = source
		return source, true
	}
	source, ok := c.sources[server]
	return source, ok
}

// closeMCP stops every MCP server this invocation started.
func (w *workspace) closeMCP() { w.mcp.close() }

// close stops the client's servers; a nil client has none.
func (c *mcpClient) close() {
	if c != nil {
		c.manager.Close()
	}
}

// mcpStartError is why the MCP tool a call names is not in the roster:
// its server is untrusted, unavailable, or failed to start; nil when
// there is no such reason. failed tells a server that could not start
// (the call could not start) from one that was refused.
func (w *workspace) mcpStartError() (err error, failed bool) {
	if w.mcp == nil || w.mcp.startErr == nil {
		return nil, false
	}
	err = w.mcp.startErr
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
	for _, s := range w.mcp.manager.Status() {
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
	for _, err := range w.mcp.problems {
		notes = append(notes, fmt.Sprintf("%v; left out (basis check lists every problem)", err))
	}
	return notes
}

// mcpSandbox is what the SANDBOX column says of an MCP tool: its stdio
// server's sandbox, or "-" for a server that is no program basis starts.
func (w *workspace) mcpSandbox(d contract.Descriptor) string {
	if w.mcp == nil {
		return "-"
	}
	for _, s := range w.mcp.cfg.Servers {
		if strings.HasSuffix(d.Source, "#"+s.Name) && s.Type == mcpbind.TypeStdio {
			return describePolicy(w.ws.SandboxPolicy(mcpbind.SandboxName(s.Name), true)).String()
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
	cfg, errs := w.loadMCPConfig(ctx)
	if cfg == nil {
		return errs, nil, 0, 0
	}
	files = len(cfg.Files)
	for _, s := range cfg.Servers {
		// Variables, and a workspace server's cwd outside the workspace.
		if err := s.Check(w.lookupEnv); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range cfg.Files {
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
	if !start || len(cfg.Servers) == 0 {
		return errs, lines, files, 0
	}
	c, _ := w.newMCPClient(ctx) // its problems are errs already
	if c == nil {
		return errs, lines, files, 0
	}
	defer c.manager.Close()
	if err := c.manager.StartAll(ctx); err != nil {
		errs = append(errs, problems(err)...)
	}
	byServer := map[string][]string{}
	for _, t := range c.manager.Tools() {
		d := t.Descriptor()
		server, _ := c.manager.ServerFor(d.Name)
		byServer[server] = append(byServer[server], d.Name)
		tools++
	}
	for _, s := range c.manager.Status() {
		line := fmt.Sprintf("mcp server %s: %s", s.Server, s)
		if names := byServer[s.Server]; len(names) > 0 {
			slices.Sort(names)
			line += ": " + strings.Join(names, ", ")
		}
		lines = append(lines, line)
	}
	return errs, lines, files, tools
}
