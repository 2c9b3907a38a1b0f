//go:build unix

package workspace

import (
	"slices"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// SandboxRefusal is the line a failed run of tool's program in dir ends
// with: the sandbox it runs in and the settings that allow more (basis
// explain shows it). tools are the declared tools the roster was built
// from; empty for a tool whose programs the workspace does not confine
// (an MCP tool) or cannot confine here.
func (w *Workspace) SandboxRefusal(tool, dir string, tools []*declared.Tool) string {
	confine, network := w.Sandbox(), false
	if !contract.IsSpawnName(tool) {
		i := slices.IndexFunc(tools, func(t *declared.Tool) bool { return t.Descriptor().Name == tool })
		if i < 0 {
			return ""
		}
		spec := tools[i].Spec()
		network = spec.Network
		if spec.ReadOnly {
			confine = w.ReadOnlySandbox()
		}
	}
	c, err := confine(tool, network, dir)
	if err != nil || c == nil {
		return ""
	}
	return c.Refusal
}
