//go:build unix

package workspace

import (
	"errors"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/sandbox"
)

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
	p := w.SandboxPolicy(tool, network)
	s := ToolSandbox{Mode: p.Mode, Network: "none"}
	if s.Mode == "" {
		s.Mode = sandbox.WorkspaceWrite // the zero value is the default
	}
	if p.Network || s.Mode == sandbox.Off {
		s.Network = "allowed"
	}
	return s
}

// DeclaredStatus is "ok", or why a call to t would be refused before it
// runs, as a host lists its tools: "unavailable: GITHUB_TOKEN not set"
// for an unset ${VAR}, "unavailable: cwd outside the workspace".
func DeclaredStatus(t *declared.Tool) string {
	var ue *declared.UnavailableError
	if !errors.As(t.Unavailable(), &ue) {
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
