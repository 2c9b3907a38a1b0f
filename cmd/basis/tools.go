package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/basis-go/basis/contract"
	basisws "github.com/basis-go/basis/workspace"
)

// toolJSON is one entry of `basis tools --json`.
type toolJSON struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	InputSchema json.RawMessage     `json:"input_schema"`
	SideEffect  contract.SideEffect `json:"side_effect"`
	Binding     string              `json:"binding"`
	Source      string              `json:"source"`
	// Status is "ok", or "unavailable: …" with the reason a call to the
	// tool would be refused.
	Status string `json:"status"`
	// Sandbox is how the tool's programs are confined; absent for a tool
	// that starts no program here.
	Sandbox *basisws.ToolSandbox `json:"sandbox,omitempty"`
}

func cmdTools(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("tools", "tools [--json]", `Lists every tool the model would see in this workspace: basis's own spawn
tool, the workspace's declared tools, the global ones, then the tools of
every MCP server configured in the workspace's .mcp.json and the
operator's mcp.json (each trusted server is started to list them), with a
table of those servers and how each is doing.

  --json   print a JSON array (name, description, input_schema, side_effect,
           binding, source, status, sandbox) instead of a table
`)
	asJSON := c.fs.Bool("json", false, "")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	w.mcpStart = mcpAll
	defer w.closeMCP()
	rt, errs := w.build(ctx, nil)
	if errs != nil {
		return configErr(e, errs)
	}
	for _, n := range w.mcpNotes() {
		fmt.Fprintf(e.stderr, "basis: note: %s\n", n)
	}
	tools := rt.Tools()
	status := w.toolStatus()
	sandboxFor := w.toolSandboxes()
	if *asJSON {
		out := make([]toolJSON, len(tools))
		for i, d := range tools {
			out[i] = toolJSON{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, SideEffect: d.SideEffect, Binding: d.Binding, Source: d.Source, Status: status(d.Name)}
			if sb, ok := sandboxFor(d.Name); ok {
				out[i].Sandbox = &sb
			}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return usageErr(e, "writing the list: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBINDING\tSIDE EFFECT\tSOURCE\tSTATUS\tSANDBOX\tDESCRIPTION")
	for _, d := range tools {
		source := d.Source
		switch d.Binding {
		case contract.BindingDeclared:
			source = w.displayPath(source)
		case contract.BindingMCP:
			if file, server, ok := cutLast(source, "#"); ok {
				source = w.displayPath(file) + "#" + server
			}
		}
		if source == "" {
			source = "basis"
		}
		sb := "-"
		if o, ok := sandboxFor(d.Name); ok {
			sb = o.String()
		} else if d.Binding == contract.BindingMCP {
			sb = w.mcpSandbox(d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Binding, d.SideEffect, source, status(d.Name), sb, oneLine(d.Description))
	}
	if err := tw.Flush(); err != nil {
		return usageErr(e, "writing the list: %v", err)
	}
	if rows := w.mcpServerRows(); len(rows) > 0 {
		fmt.Fprintln(e.stdout)
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MCP SERVER\tSOURCE\tSTATUS")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Source, oneLine(r.Status))
		}
		if err := tw.Flush(); err != nil {
			return usageErr(e, "writing the list: %v", err)
		}
	}
	return exitOK
}

// mcpServerRow is one MCP server in `basis tools`: its name, the config
// file it comes from, and how it is doing ("connected, 2 tools",
// "untrusted: run basis mcp trust", "failed: …").
type mcpServerRow struct {
	Name, Source, Status string
}

// cutLast cuts s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// toolStatus returns, by tool name, "ok" or why a call to a declared
// tool would be refused before it runs.
func (w *workspace) toolStatus() func(name string) string {
	status := map[string]string{}
	for _, t := range w.declared {
		status[t.Descriptor().Name] = basisws.DeclaredStatus(t)
	}
	return func(name string) string {
		if s, ok := status[name]; ok {
			return s
		}
		return "ok"
	}
}
