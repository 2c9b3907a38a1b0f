//go:build unix

package otelbasis

import (
	"context"
	"time"

	"github.com/basis-go/basis/contract"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
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
	name := r.Method
	if r.Target != "" {
		name += " " + r.Target
	}
	attrs := []attribute.KeyValue{KeyMCPMethod.String(r.Method)}
	if r.Method == "tools/call" && r.Target != "" {
		attrs = append(attrs, KeyToolName.String(r.Target), KeyOperationName.String("execute_tool"))
	}
	if r.ProtocolVersion != "" {
		attrs = append(attrs, KeyMCPProtocolVersion.String(r.ProtocolVersion))
	}
	if r.SessionID != "" {
		attrs = append(attrs, KeyMCPSessionID.String(r.SessionID))
	}
	if r.Transport != "" {
		attrs = append(attrs, KeyNetworkTransport.String(r.Transport))
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if tc, ok := contract.TraceContextOf(ctx); ok {
			ctx = o.prop.Extract(ctx, propagation.MapCarrier{"traceparent": tc.Parent, "tracestate": tc.State})
		}
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	if span.SpanContext().IsValid() {
		carrier := propagation.MapCarrier{}
		o.prop.Inject(ctx, carrier)
		ctx = contract.WithTraceContext(ctx, contract.TraceContext{Parent: carrier.Get("traceparent"), State: carrier.Get("tracestate")})
	}
	return ctx, func(errorType string) {
		if r.RequestID != nil {
			if id := r.RequestID(); id != "" {
				span.SetAttributes(KeyJSONRPCRequestID.String(id))
			}
		}
		mattrs := []attribute.KeyValue{KeyMCPMethod.String(r.Method)}
		if errorType != "" {
			span.SetAttributes(KeyErrorType.String(errorType))
			span.SetStatus(codes.Error, errorType)
			mattrs = append(mattrs, KeyErrorType.String(errorType))
		}
		span.End()
		o.mcpServerDur.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
	}
}
