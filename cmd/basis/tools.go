package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/basis-go/basis/contract"
)

// toolJSON is one entry of `basis tools --json`.
type toolJSON struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	InputSchema json.RawMessage     `json:"input_schema"`
	SideEffect  contract.SideEffect `json:"side_effect"`
	Binding     string              `json:"binding"`
	Source      string              `json:"source"`
}

func cmdTools(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("tools", "tools [--json]", `Lists every tool the model would see in this workspace: basis's own spawn
tool, then the workspace's declared tools, then the global ones.

  --json   print a JSON array (name, description, input_schema, side_effect,
           binding, source) instead of a table
`)
	asJSON := c.fs.Bool("json", false, "")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	rt, errs := w.build(nil)
	if errs != nil {
		return configErr(e, errs)
	}
	tools := rt.Tools()
	if *asJSON {
		out := make([]toolJSON, len(tools))
		for i, d := range tools {
			out[i] = toolJSON{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, SideEffect: d.SideEffect, Binding: d.Binding, Source: d.Source}
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
	fmt.Fprintln(tw, "NAME\tBINDING\tSIDE EFFECT\tSOURCE\tDESCRIPTION")
	for _, d := range tools {
		source := d.Source
		if d.Binding == contract.BindingDeclared {
			source = w.displayPath(source)
		}
		if source == "" {
			source = "basis"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Binding, d.SideEffect, source, oneLine(d.Description))
	}
	if err := tw.Flush(); err != nil {
		return usageErr(e, "writing the list: %v", err)
	}
	return exitOK
}
