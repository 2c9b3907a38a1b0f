package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
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
	Sandbox *sandboxOf `json:"sandbox,omitempty"`
}

func cmdTools(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("tools", "tools [--json]", `Lists every tool the model would see in this workspace: basis's own spawn
tool, then the workspace's declared tools, then the global ones.

  --json   print a JSON array (name, description, input_schema, side_effect,
           binding, source, status, sandbox) instead of a table
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
	rt, errs := w.build(ctx, nil)
	if errs != nil {
		return configErr(e, errs)
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
		if d.Binding == contract.BindingDeclared {
			source = w.displayPath(source)
		}
		if source == "" {
			source = "basis"
		}
		sb := "-"
		if o, ok := sandboxFor(d.Name); ok {
			sb = o.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Binding, d.SideEffect, source, status(d.Name), sb, oneLine(d.Description))
	}
	if err := tw.Flush(); err != nil {
		return usageErr(e, "writing the list: %v", err)
	}
	return exitOK
}

// toolStatus returns, by tool name, "ok" or why a call would be refused
// before it runs: a declared tool whose ${VAR} is not set here.
func (w *workspace) toolStatus() func(name string) string {
	unavailable := map[string]string{}
	for _, t := range w.declared {
		var ue *declared.UnavailableError
		if errors.As(t.Unavailable(), &ue) {
			var vars []string
			for _, p := range ue.Problems {
				vars = append(vars, p.Variable)
			}
			unavailable[ue.Tool] = "unavailable: " + strings.Join(vars, ", ") + " not set"
		}
	}
	return func(name string) string {
		if s, ok := unavailable[name]; ok {
			return s
		}
		return "ok"
	}
}
