//go:build unix

package otelbasis

import (
	"context"
	"time"

	"github.com/basis-go/basis/contract"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MetricMCPServerDuration is the MCP conventions' histogram of the
// requests `basis serve` (mcpserve) answers, in seconds.
const MetricMCPServerDuration = "mcp.server.operation.duration"

// mcpDurationBuckets are the bucket boundaries the MCP conventions give
// their duration histograms, in seconds.
var mcpDurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// StartServedRequest starts a server span "{mcp.method.name} {target}"
// for a request an MCP server of basis's answers (mcpserve's
// RequestObserver): a child of the span in ctx, or else of the
// [contract.TraceContext] ctx carries (the trace the client sent in
// params._meta), or else a root. The returned context carries the span,
// also as a [contract.TraceContext], so the call it serves (an
// execute_tool span) is its child. The end function takes the request's
// error.type: empty for success. The request's JSON-RPC id
// ([contract.MCPRequest].RequestID) is read when it ends.
func (o *Observer) StartServedRequest(ctx context.Context, r contract.MCPRequest) (context.Context, func(errorType string)) {
	start := time.Now()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if tc, ok := contract.TraceContextOf(ctx); ok {
			ctx = o.prop.Extract(ctx, propagation.MapCarrier{"traceparent": tc.Parent, "tracestate": tc.State})
		}
	}
	ctx, span := o.startMCPSpan(ctx, r, trace.SpanKindServer)
	return ctx, func(errorType string) { o.endMCPSpan(ctx, span, r, errorType, o.mcpServerDur, start) }
}
