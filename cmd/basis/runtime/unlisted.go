//go:build unix

package runtime

import (
	"context"
	"time"

	"github.com/basis-go/basis/contract"
)

// CallUnlisted runs one call of a tool that is not in the roster through
// the same pipeline as [Runtime.Call]: input check, preview, gate, audit,
// execution. It is for requests that are calls in all but name, such as
// an MCP server's resource read or prompt get that a host serves
// (mcpbind.Surface): they are judged and recorded as calls are, yet no
// model lists them as tools. The tool is registered for this one call,
// as [Builder.AddMCP] would register it when its Binding is MCP (its
// name must then carry [contract.MCPPrefix]); a tool that could not be
// registered is refused at the unknown stage.
func (rt *Runtime) CallUnlisted(ctx context.Context, tool contract.ExecutableTool, call contract.Call) Outcome {
	start := time.Now()
	e, err := newEntry(tool, false, map[string]string{})
	if err == nil {
		e.mcp = e.desc.Binding == contract.BindingMCP
		err = checkRegistration(e)
	}
	var r *registered
	if err == nil {
		rs, cerr := compile([]*entry{e})
		if err = cerr; err == nil {
			r = rs[0]
		}
	}
	var out Outcome
	name := ""
	if r == nil {
		out = refused("", StageUnknown, "the request was not run: "+err.Error(), err)
	} else {
		name = r.desc.Name
		out = rt.call(ctx, nil, r, name, call)
	}
	out.CallID, out.Tool = call.ID, name
	out.Duration = time.Since(start)
	if rt.audit != nil && r != nil {
		rt.audit.end(start, r, &out)
	}
	return out
}
