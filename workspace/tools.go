//go:build unix

package workspace

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/sandbox"
)

// ToolInfo is one tool as a host lists it (basis tools, and each entry of
// its --json).
type ToolInfo struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	InputSchema json.RawMessage     `json:"input_schema"`
	SideEffect  contract.SideEffect `json:"side_effect"`
	Binding     string              `json:"binding"`
	Source      string              `json:"source"`
	// Status is "ok", or "unavailable: …" with the reason a call to the
	// tool would be refused ([DeclaredStatus]).
	Status string `json:"status"`
	// Sandbox is how the tool's programs are confined; nil for a tool
	// that starts no program the workspace confines (an MCP tool: its
	// server's host confines it).
	Sandbox *ToolSandbox `json:"sandbox,omitempty"`
}

// ToolInfos lists the tools of a roster (the runtime's Tools) as a host
// shows them: spawn's and the declared tools' sandboxes, and the status
// of each of tools, the declared tools the roster was built from.
func (w *Workspace) ToolInfos(roster []contract.Descriptor, tools []*declared.Tool) []ToolInfo {
	status := map[string]string{}
	for _, t := range tools {
		status[t.Descriptor().Name] = DeclaredStatus(t)
	}
	policies := w.ToolPolicies(tools)
	out := make([]ToolInfo, len(roster))
	for i, d := range roster {
		out[i] = ToolInfo{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, SideEffect: d.SideEffect,
			Binding: d.Binding, Source: d.Source, Status: "ok"}
		if s, ok := status[d.Name]; ok {
			out[i].Status = s
		}
		if p, ok := policies[d.Name]; ok {
			sb := sandboxOf(p)
			out[i].Sandbox = &sb
		}
	}
	return out
}

// ToolPolicies is the sandbox policy of spawn's commands and of each of
// tools' programs, by tool name: what [Workspace.SandboxProblems] checks.
func (w *Workspace) ToolPolicies(tools []*declared.Tool) map[string]sandbox.Policy {
	out := map[string]sandbox.Policy{contract.SpawnName: w.SandboxPolicy(sandbox.SpawnTool, false)}
	for _, t := range tools {
		name := t.Descriptor().Name
		out[name] = w.SandboxPolicy(name, t.Spec().Network)
		if t.Spec().ReadOnly {
			out[name], _ = w.ReadOnlyPolicy(name)
		}
	}
	return out
}

// ToolSandbox is how a tool's programs are confined, as a host lists its
// tools (basis tools' SANDBOX column, and "sandbox" in its --json).
type ToolSandbox struct {
	Mode sandbox.Mode `json:"mode"`
	// Network is "allowed" or "none", as a preview's "sandbox" says.
	Network string `json:"network"`
}

// String is "workspace-write, no network", "read-only, network" or "off".
func (s ToolSandbox) String() string {
	switch {
	case s.Mode == sandbox.Off:
		return "off"
	case s.Network == "allowed":
		return string(s.Mode) + ", network"
	}
	return string(s.Mode) + ", no network"
}

// SandboxOf is what [Workspace.SandboxPolicy] gives tool, as a host lists it.
func (w *Workspace) SandboxOf(tool string, network bool) ToolSandbox {
	return sandboxOf(w.SandboxPolicy(tool, network))
}

func sandboxOf(p sandbox.Policy) ToolSandbox {
	s := ToolSandbox{Mode: p.Mode, Network: "none"}
	if s.Mode == "" {
		s.Mode = sandbox.WorkspaceWrite // the zero value is the default
	}
	if p.Network || s.Mode == sandbox.Off {
		s.Network = "allowed"
	}
	return s
}

// DeclaredStatus is "ok", or why a call to t would be refused or fail
// before its program runs, as a host lists its tools: "unavailable:
// GITHUB_TOKEN not set" for an unset ${VAR}, "unavailable: cwd outside
// the workspace", "cannot start: the program ./.basis/bin/x does not
// exist" ([declared.Tool.CheckStart]).
func DeclaredStatus(t *declared.Tool) string {
	var ue *declared.UnavailableError
	if !errors.As(t.Unavailable(), &ue) {
		var ce *configfile.Error
		if err := t.CheckStart(); errors.As(err, &ce) && ce.Err != nil {
			return "cannot start: " + ce.Err.Error()
		} else if err != nil {
			return "cannot start"
		}
		return "ok"
	}
	var vars, reasons []string
	for _, p := range ue.Problems {
		var xe *configfile.ExpandError
		switch {
		case errors.As(p, &xe) && errors.Is(xe, configfile.ErrUnsetVariable):
			vars = append(vars, xe.Variable)
		case errors.Is(p, declared.ErrOutsideWorkspace):
			reasons = append(reasons, p.Field+" outside the workspace")
		}
	}
	if len(vars) > 0 {
		reasons = append([]string{strings.Join(vars, ", ") + " not set"}, reasons...)
	}
	return "unavailable: " + strings.Join(reasons, "; ")
}

// checkDeclared is what a checker (basis check) says of declared tools
// beyond their manifests' syntax: each tool that cannot run here (an
// unset ${VAR}, a program not found) is a problem; what a manifest says
// that works but is unwise, a warning.
func checkDeclared(tools []*declared.Tool) (problems []error, warnings []string) {
	for _, t := range tools {
		if err := t.Unavailable(); err != nil {
			problems = append(problems, err)
			continue
		}
		if err := t.CheckStart(); err != nil {
			problems = append(problems, err)
		}
		for _, w := range t.Warnings() {
			warnings = append(warnings, w.String())
		}
	}
	return problems, warnings
}
