package mcpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// servedRecorder is a RequestObserver that writes down each request
// served and hands the call a trace context of its own.
type servedRecorder struct {
	mu   sync.Mutex
	seen []string
}

const servedParent = "00-11111111111111111111111111111111-2222222222222222-01"

func (r *servedRecorder) StartServedRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(string)) {
	tc, _ := contract.TraceContextOf(ctx)
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%s %q transport=%s version=%s client=%s", req.Method, req.Target, req.Transport, req.ProtocolVersion, tc.Parent))
	r.mu.Unlock()
	return contract.WithTraceContext(ctx, contract.TraceContext{Parent: servedParent}), func(errorType string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen = append(r.seen, fmt.Sprintf("end %s error.type=%q", req.Method, errorType))
	}
}

// With an observer, every request served is reported with the trace the
// client sent, the call runs under the trace context the observer
// returns (its span's), and each answer's error type is the
// conventions': "tool_error" for a tool result that is an error (a
// refusal too), the JSON-RPC code for a protocol error.
func TestServeObserver(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rec := &servedRecorder{}
	h := newHarness(t, &mcpserve.ServerOptions{Observer: rec})
	h.roster.add(contract.Descriptor{Name: "tracecontext", Description: "d", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)})
	cs := h.connect(t, nil, "2025-11-25", nil)
	p := &mcp.CallToolParams{Name: "tracecontext", Arguments: map[string]any{}}
	p.Meta = mcp.Meta{"traceparent": parent}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := textOf(t, res), "true "+servedParent+" "; got != want {
		t.Errorf("the roster saw %q, want the observer's %q", got, want)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nosuchtool", Arguments: map[string]any{}}); err != nil || !res.IsError {
		t.Fatalf("an unknown tool: %v, %v; want a tool error", res, err)
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///nope"})
	werr, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		t.Fatalf("reading a resource the server has not: %v, want a JSON-RPC error", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{
		`initialize "" transport=pipe version=2025-11-25 client=`, `end initialize error.type=""`,
		`tools/call "tracecontext" transport=pipe version=2025-11-25 client=` + parent, `end tools/call error.type=""`,
		`tools/call "nosuchtool" transport=pipe version=2025-11-25 client=`, `end tools/call error.type="tool_error"`,
		`resources/read "file:///nope" transport=pipe version=2025-11-25 client=`, fmt.Sprintf(`end resources/read error.type="%d"`, werr.Code),
	}
	if diff := cmp.Diff(want, rec.seen); diff != "" {
		t.Errorf("requests observed (-want +got):\n%s", diff)
	}
}
