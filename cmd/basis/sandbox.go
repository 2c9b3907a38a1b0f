package main

import (
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
)

// sandboxOf is what `basis tools` shows of a tool's sandbox.
type sandboxOf struct {
	Mode    sandbox.Mode `json:"mode"`
	Network string       `json:"network"` // "allowed" or "none", as a preview's "sandbox" says
}

// String is the SANDBOX column: "workspace-write, no network", "off".
func (o sandboxOf) String() string {
	switch {
	case o.Mode == sandbox.Off:
		return "off"
	case o.Network == "allowed":
		return string(o.Mode) + ", network"
	}
	return string(o.Mode) + ", no network"
}

func describePolicy(p sandbox.Policy) sandboxOf {
	o := sandboxOf{Mode: p.Mode, Network: "none"}
	if o.Mode == "" {
		o.Mode = sandbox.WorkspaceWrite // the zero value is the default
	}
	if p.Network || o.Mode == sandbox.Off {
		o.Network = "allowed"
	}
	return o
}

// toolSandboxes returns, by tool name, the sandbox each program-running
// tool of the last build gets; ok is false for a tool that starts no
// program here (none yet).
func (w *workspace) toolSandboxes() func(name string) (sandboxOf, bool) {
	policies := w.toolPolicies()
	return func(name string) (sandboxOf, bool) {
		p, ok := policies[name]
		if !ok {
			return sandboxOf{}, false
		}
		return describePolicy(p), true
	}
}

// toolPolicies is the sandbox policy of spawn's commands and of every
// declared tool of the last build.
func (w *workspace) toolPolicies() map[string]sandbox.Policy {
	out := map[string]sandbox.Policy{contract.SpawnName: w.ws.SandboxPolicy(sandbox.SpawnTool, false)}
	for _, t := range w.declared {
		d := t.Descriptor()
		out[d.Name] = w.ws.SandboxPolicy(d.Name, t.Spec().Network)
	}
	return out
}
