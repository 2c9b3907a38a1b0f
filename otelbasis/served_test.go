//go:build unix

package otelbasis_test

import (
	"context"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/otelbasis"
	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A request basis serves is a server span "{method} {target}" in the MCP
// conventions, continuing the trace the client sent (the
// contract.TraceContext mcpserve takes from params._meta); the call it
// serves is its child; the server duration histogram has the
// conventions' buckets.
func TestServedRequestSpan(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tests := []struct {
		name      string
		req       contract.MCPRequest
		errorType string
		wantName  string
		want      map[string]string
	}{
		{"tools/call", contract.MCPRequest{Method: "tools/call", Target: "echo", ProtocolVersion: "2025-11-25", SessionID: "s-1", Transport: "tcp", RequestID: func() string { return "7" }},
			"", "tools/call echo", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": "2025-11-25", "mcp.session.id": "s-1", "network.transport": "tcp", "jsonrpc.request.id": "7"}},
		{"no id known", contract.MCPRequest{Method: "tools/list", Transport: "pipe", RequestID: func() string { return "" }},
			"", "tools/list", map[string]string{"mcp.method.name": "tools/list", "network.transport": "pipe"}},
		{"tool error", contract.MCPRequest{Method: "tools/call", Target: "broken", Transport: "pipe"},
			"tool_error", "tools/call broken", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "broken", "gen_ai.operation.name": "execute_tool",
				"network.transport": "pipe", "error.type": "tool_error"}},
		{"protocol error", contract.MCPRequest{Method: "resources/read", Target: "file:///x", Transport: "pipe"},
			"-32002", "resources/read file:///x", map[string]string{"mcp.method.name": "resources/read", "network.transport": "pipe", "error.type": "-32002"}},
		{"tools/list", contract.MCPRequest{Method: "tools/list", Transport: "pipe"},
			"", "tools/list", map[string]string{"mcp.method.name": "tools/list", "network.transport": "pipe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
			reader := sdkmetric.NewManualReader()
			obs, err := otelbasis.NewObserver(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The client's trace, as mcpserve puts it in the request's
			// context.
			ctx := contract.WithTraceContext(t.Context(), contract.TraceContext{Parent: "00-" + traceID + "-" + spanID + "-01"})
			ctx, end := obs.StartServedRequest(ctx, tt.req)
			tc, ok := contract.TraceContextOf(ctx)
			// The call runs on a context of its own that carries only
			// the server span's trace context, as mcpserve's pipeline.
			callCtx := contract.WithTraceContext(context.Background(), tc)
			_, callEnd := obs.StartCall(callCtx, runtime.CallStart{Tool: tt.req.Target, CallID: "mcp-1"})
			callEnd(&runtime.Outcome{Status: runtime.StatusOK})
			end(tt.errorType)

			got := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range spans.GetSpans().Snapshots() {
				got[s.Name()] = s
			}
			srv := got[tt.wantName]
			if srv == nil {
				t.Fatalf("no %q span; got %v", tt.wantName, got)
			}
			if diff := cmp.Diff(tt.want, attrs(srv.Attributes())); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			if srv.SpanKind().String() != "server" {
				t.Errorf("kind %v, want server", srv.SpanKind())
			}
			if srv.SpanContext().TraceID().String() != traceID || srv.Parent().SpanID().String() != spanID || !srv.Parent().IsRemote() {
				t.Errorf("the server span is in trace %s under %s, want the client's %s under %s", srv.SpanContext().TraceID(), srv.Parent().SpanID(), traceID, spanID)
			}
			wantTP := "00-" + traceID + "-" + srv.SpanContext().SpanID().String() + "-01"
			if !ok || tc.Parent != wantTP {
				t.Errorf("the request's context carries %q (%v), want the server span's %q", tc.Parent, ok, wantTP)
			}
			call := got["execute_tool "+tt.req.Target]
			if call == nil || call.Parent().SpanID() != srv.SpanContext().SpanID() || call.SpanContext().TraceID() != srv.SpanContext().TraceID() {
				t.Errorf("the call's execute_tool span is not the server span's child: %v", call)
			}

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var hist *metricdata.Histogram[float64]
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == otelbasis.MetricMCPServerDuration {
						h := m.Data.(metricdata.Histogram[float64])
						hist = &h
						if m.Unit != "s" {
							t.Errorf("%s unit %q, want s", m.Name, m.Unit)
						}
					}
				}
			}
			if hist == nil || len(hist.DataPoints) != 1 {
				t.Fatalf("no single %s point: %+v", otelbasis.MetricMCPServerDuration, hist)
			}
			p := hist.DataPoints[0]
			wantBounds := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
			if diff := cmp.Diff(wantBounds, p.Bounds); diff != "" {
				t.Errorf("bucket bounds (-want +got):\n%s", diff)
			}
			wantAttrs := map[string]string{"mcp.method.name": tt.req.Method}
			if tt.errorType != "" {
				wantAttrs["error.type"] = tt.errorType
			}
			if diff := cmp.Diff(wantAttrs, attrs(p.Attributes.ToSlice())); diff != "" {
				t.Errorf("metric attributes (-want +got):\n%s", diff)
			}
			if wantCode := map[bool]string{false: "Unset", true: "Error"}[tt.errorType != ""]; srv.Status().Code.String() != wantCode || srv.Status().Description != tt.errorType {
				t.Errorf("status %v %q, want %s %q", srv.Status().Code, srv.Status().Description, wantCode, tt.errorType)
			}
		})
	}
}
