package mcpserve

import (
	"context"
	"sync/atomic"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// RuntimeRoster serves a basis runtime: it is the [ChangingRoster] of a
// [runtime.Runtime], every call going through the runtime's whole
// pipeline (schema, preview, gate, execution, audit). A host that reloads
// its configuration replaces the runtime whole ([RuntimeRoster.Store],
// then [Server.Refresh]); a call runs on the runtime it began with.
type RuntimeRoster struct {
	// Depth is the delegation depth calls run at
	// ([contract.WithDelegationDepth]): a host that a spawn task started
	// passes its own, so spawn's depth bound holds across the two.
	Depth int
	rt    atomic.Pointer[runtime.Runtime]
}

// NewRuntimeRoster returns the roster of rt.
func NewRuntimeRoster(rt *runtime.Runtime) *RuntimeRoster {
	r := &RuntimeRoster{}
	r.rt.Store(rt)
	return r
}

// Load returns the runtime served now.
func (r *RuntimeRoster) Load() *runtime.Runtime { return r.rt.Load() }

// Store replaces the runtime served; calls in flight finish on the old one.
func (r *RuntimeRoster) Store(rt *runtime.Runtime) { r.rt.Store(rt) }

// Tools returns the runtime's descriptors.
func (r *RuntimeRoster) Tools() []contract.Descriptor { return r.rt.Load().Tools() }

// Changed is the runtime's: the server refreshes its list when, say, the
// tools of a proxied MCP server change.
func (r *RuntimeRoster) Changed() <-chan struct{} { return r.rt.Load().Changed() }

// Call runs one call through the runtime's pipeline; every outcome but ok
// (a tool error, any refusal) is an error result.
func (r *RuntimeRoster) Call(ctx context.Context, name string, call contract.Call) (string, bool) {
	out := r.rt.Load().Call(contract.WithDelegationDepth(ctx, r.Depth), name, call)
	return out.Text, out.Status != runtime.StatusOK
}
