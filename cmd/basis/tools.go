package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/basis-go/basis/contract"
)

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
	tools := w.ws.ToolInfos(rt.Tools(), w.declared)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tools); err != nil {
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
		if d.Sandbox != nil {
			sb = d.Sandbox.String()
		} else if d.Binding == contract.BindingMCP {
			sb = w.mcpSandbox(d.Source)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Binding, d.SideEffect, source, d.Status, sb, oneLine(d.Description))
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
