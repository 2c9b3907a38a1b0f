package mcpserve_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call continues the trace its client sent in _meta: the roster's
// context carries it, and a malformed one is dropped.
func TestServeContinuesClientTrace(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := newHarness(t, nil)
	h.roster.add(contract.Descriptor{Name: "tracecontext", Description: "d", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)})
	cs := h.connect(t, nil, "", nil)
	tests := []struct {
		name string
		meta mcp.Meta
		want string
	}{
		{"none", nil, "false  "},
		{"parent and state", mcp.Meta{"traceparent": parent, "tracestate": "v=1"}, "true " + parent + " v=1"},
		{"malformed", mcp.Meta{"traceparent": parent + "\nX=1"}, "false  "},
		{"not a string", mcp.Meta{"traceparent": 7}, "false  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &mcp.CallToolParams{Name: "tracecontext", Arguments: map[string]any{}}
			p.Meta = tt.meta
			res, err := cs.CallTool(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != tt.want {
				t.Errorf("the roster saw %q, want %q", got, tt.want)
			}
		})
	}
}
