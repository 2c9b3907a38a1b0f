package main

import (
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
	basisws "github.com/basis-go/basis/workspace"
)

// toolSandboxes returns, by tool name, the sandbox each program-running
// tool of the last build gets; ok is false for a tool that starts no
// program here (none yet).
func (w *workspace) toolSandboxes() func(name string) (basisws.ToolSandbox, bool) {
	out := map[string]basisws.ToolSandbox{contract.SpawnName: w.ws.SandboxOf(sandbox.SpawnTool, false)}
	for _, t := range w.declared {
		out[t.Descriptor().Name] = w.ws.SandboxOf(t.Descriptor().Name, t.Spec().Network)
	}
	return func(name string) (basisws.ToolSandbox, bool) {
		sb, ok := out[name]
		return sb, ok
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
