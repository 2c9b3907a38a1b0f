//go:build unix

package otelbasis

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/basis-go/basis/otelbasis"

// Attribute keys: the GenAI semantic conventions' (execute-tool.md) and
// basis's own.
const (
	KeyOperationName = attribute.Key("gen_ai.operation.name")
	KeyToolName      = attribute.Key("gen_ai.tool.name")
	KeyToolCallID    = attribute.Key("gen_ai.tool.call.id")
	KeyToolType      = attribute.Key("gen_ai.tool.type")
	KeyToolArguments = attribute.Key("gen_ai.tool.call.arguments")
	KeyToolResult    = attribute.Key("gen_ai.tool.call.result")
	KeyErrorType     = attribute.Key("error.type")

	KeyStatus       = attribute.Key("basis.status")
	KeyStage        = attribute.Key("basis.refusal.stage")
	KeyGateDecision = attribute.Key("basis.gate.decision")
	KeyGateLayer    = attribute.Key("basis.gate.layer")
	KeyGateRule     = attribute.Key("basis.gate.rule")
	KeySandboxMode  = attribute.Key("basis.sandbox.mode")
	KeySideEffect   = attribute.Key("basis.side_effect")
	KeySource       = attribute.Key("basis.source")

	// The MCP semantic conventions' (mcp.md).
	KeyMCPMethod          = attribute.Key("mcp.method.name")
	KeyMCPProtocolVersion = attribute.Key("mcp.protocol.version")
	KeyMCPSessionID       = attribute.Key("mcp.session.id")
	KeyNetworkTransport   = attribute.Key("network.transport")
	KeyJSONRPCRequestID   = attribute.Key("jsonrpc.request.id")
	KeyMCPServer          = attribute.Key("basis.mcp.server")
)

// Metric names.
const (
	// MetricToolDuration is the GenAI conventions' histogram of tool
	// execution time, in seconds: the whole pipeline of a call.
	MetricToolDuration = "gen_ai.execute_tool.duration"
	// MetricDenials counts the calls the gate denied, by the layer that
	// decided ([KeyGateLayer]).
	MetricDenials = "basis.gate.denials"
	// MetricMCPClientDuration is the MCP conventions' histogram of the
	// requests basis sends to MCP servers, in seconds.
	MetricMCPClientDuration = "mcp.client.operation.duration"
)

// Options configure an [Observer]. The zero value records neither the
// arguments nor the results of calls.
type Options struct {
	// RecordArguments records each call's input as the conventions'
	// opt-in gen_ai.tool.call.arguments. Inputs may carry secrets a model
	// was given: set it only where the trace backend may see them.
	RecordArguments bool
	// RecordResults records the text the model reads as
	// gen_ai.tool.call.result. A program's output may carry secrets.
	RecordResults bool
}

// Observer is a [runtime.Observer] that makes an execute_tool span per
// call, a child span per phase, and the duration and denial metrics. It
// is safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	denials  metric.Int64Counter
	mcpDur   metric.Float64Histogram
	// mcpServerDur is [MetricMCPServerDuration] (served.go).
	mcpServerDur metric.Float64Histogram
	opts         Options
	prop         propagation.TraceContext
}

var _ runtime.Observer = (*Observer)(nil)

// NewObserver returns an Observer that records to tp and mp; a nil
// provider means the global one (otel.GetTracerProvider,
// otel.GetMeterProvider). A nil opts means the zero Options.
func NewObserver(tp trace.TracerProvider, mp metric.MeterProvider, opts *Options) (*Observer, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	o := &Observer{tracer: tp.Tracer(ScopeName)}
	if opts != nil {
		o.opts = *opts
	}
	meter := mp.Meter(ScopeName)
	var err error
	o.duration, err = meter.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of tool execution, the whole pipeline of a call."))
	if err != nil {
		return nil, errors.Join(errors.New("otelbasis: cannot create the duration histogram"), err)
	}
	o.denials, err = meter.Int64Counter(MetricDenials, metric.WithUnit("{call}"),
		metric.WithDescription("Calls the gate denied, by the layer that decided."))
	if err != nil {
		return nil, errors.Join(errors.New("otelbasis: cannot create the denial counter"), err)
	}
	o.mcpDur, err = meter.Float64Histogram(MetricMCPClientDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the requests basis sends to MCP servers."),
		metric.WithExplicitBucketBoundaries(mcpDurationBuckets...))
	if err != nil {
		return nil, errors.Join(errors.New("otelbasis: cannot create the MCP duration histogram"), err)
	}
	o.mcpServerDur, err = meter.Float64Histogram(MetricMCPServerDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the MCP requests basis serves."),
		metric.WithExplicitBucketBoundaries(mcpDurationBuckets...))
	if err != nil {
		return nil, errors.Join(errors.New("otelbasis: cannot create the MCP server duration histogram"), err)
	}
	return o, nil
}

type callKey struct{}

// internalSpan is made once: an option is an allocation per span.
var internalSpan = trace.WithSpanKind(trace.SpanKindInternal)

// phaseSpanName is "basis." and the phase, a constant for the runtime's
// phases rather than a string built per span.
func phaseSpanName(phase runtime.Phase) string {
	switch phase {
	case runtime.PhasePreview:
		return "basis.preview"
	case runtime.PhaseGate:
		return "basis.gate"
	case runtime.PhaseExecute:
		return "basis.execute"
	}
	return "basis." + string(phase)
}

// call is what the phases of one call need of it, and what they found
// that the call's own span records again: made once, not twice (the
// sandbox mode is read from JSON).
type call struct {
	tool    string
	preview *contract.Preview
	pattrs  []attribute.KeyValue
	verdict *approver.Verdict
	vattrs  []attribute.KeyValue
}

// previewAttrs are [previewAttrs] of p, made once per call.
func (c *call) previewAttrs(p *contract.Preview) []attribute.KeyValue {
	if c == nil {
		return previewAttrs(p)
	}
	if c.preview != p {
		c.preview, c.pattrs = p, previewAttrs(p)
	}
	return c.pattrs
}

// verdictAttrs are [verdictAttrs] of v, made once per call.
func (c *call) verdictAttrs(v *approver.Verdict) []attribute.KeyValue {
	if c == nil {
		return verdictAttrs(v)
	}
	if c.verdict != v {
		c.verdict, c.vattrs = v, verdictAttrs(v)
	}
	return c.vattrs
}

// StartCall starts the call's execute_tool span: a child of the span in
// ctx, or else of the [contract.TraceContext] ctx carries (a remote
// caller's), or else a root.
func (o *Observer) StartCall(ctx context.Context, cs runtime.CallStart) (context.Context, func(*runtime.Outcome)) {
	start := time.Now()
	attrs := []attribute.KeyValue{
		KeyOperationName.String("execute_tool"),
		KeyToolName.String(cs.Tool),
		KeyToolCallID.String(cs.CallID),
		KeyToolType.String("function"),
	}
	if cs.Source != "" {
		attrs = append(attrs, KeySource.String(cs.Source))
	}
	if o.opts.RecordArguments {
		attrs = append(attrs, KeyToolArguments.String(string(cs.Input)))
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		// A caller that is not in this process's trace may have sent its
		// own (basis serve puts a client's _meta traceparent here).
		if tc, ok := contract.TraceContextOf(ctx); ok {
			ctx = o.prop.Extract(ctx, propagation.MapCarrier{"traceparent": tc.Parent, "tracestate": tc.State})
		}
	}
	ctx, span := o.tracer.Start(ctx, "execute_tool "+cs.Tool, internalSpan, trace.WithAttributes(attrs...))
	c := &call{tool: cs.Tool}
	ctx = context.WithValue(ctx, callKey{}, c)
	return ctx, func(out *runtime.Outcome) {
		o.endCall(ctx, c, span, start, out)
	}
}

func (o *Observer) endCall(ctx context.Context, c *call, span trace.Span, start time.Time, out *runtime.Outcome) {
	tool := c.tool
	// Room for every attribute below without growing.
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, KeyStatus.String(string(out.Status)))
	errType := errorType(out)
	if errType != "" {
		attrs = append(attrs, KeyErrorType.String(errType))
		// The description is the type alone: a tool's error text may
		// quote what it printed.
		span.SetStatus(codes.Error, errType)
	}
	if out.Stage != runtime.StageNone {
		attrs = append(attrs, KeyStage.String(string(out.Stage)))
	}
	if out.Preview != nil {
		attrs = append(attrs, c.previewAttrs(out.Preview)...)
	}
	if out.Verdict != nil {
		attrs = append(attrs, c.verdictAttrs(out.Verdict)...)
		if !out.Verdict.Allow {
			o.denials.Add(ctx, 1, metric.WithAttributes(KeyToolName.String(tool), KeyGateLayer.String(layerOf(out.Verdict))))
		}
	}
	if o.opts.RecordResults {
		attrs = append(attrs, KeyToolResult.String(out.Text))
	}
	span.SetAttributes(attrs...)
	span.End()

	mattrs := []attribute.KeyValue{KeyOperationName.String("execute_tool"), KeyToolName.String(tool)}
	if errType != "" {
		mattrs = append(mattrs, KeyErrorType.String(errType))
	}
	o.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
}

// StartPhase starts a child span of the call's: "basis.preview",
// "basis.gate" or "basis.execute". The execute phase's context carries
// its trace context ([contract.WithTraceContext]), which a declared
// tool's program receives as TRACEPARENT.
func (o *Observer) StartPhase(ctx context.Context, phase runtime.Phase) (context.Context, func(runtime.PhaseEnd)) {
	var attrs []attribute.KeyValue
	c, _ := ctx.Value(callKey{}).(*call)
	if c != nil {
		attrs = []attribute.KeyValue{KeyToolName.String(c.tool)}
	}
	ctx, span := o.tracer.Start(ctx, phaseSpanName(phase), internalSpan, trace.WithAttributes(attrs...))
	if phase == runtime.PhaseExecute && span.SpanContext().IsValid() {
		carrier := propagation.MapCarrier{}
		o.prop.Inject(ctx, carrier)
		ctx = contract.WithTraceContext(ctx, contract.TraceContext{Parent: carrier.Get("traceparent"), State: carrier.Get("tracestate")})
	}
	return ctx, func(end runtime.PhaseEnd) {
		if end.Preview != nil {
			span.SetAttributes(c.previewAttrs(end.Preview)...)
		}
		if end.Verdict != nil {
			span.SetAttributes(c.verdictAttrs(end.Verdict)...)
		}
		if end.Err != nil {
			t := phaseErrorType(end.Err)
			span.SetAttributes(KeyErrorType.String(t))
			span.SetStatus(codes.Error, t)
		}
		span.End()
	}
}

// errorType is the call's error.type: the refusal's stage ("denied",
// "invalid", ...), or for a tool's failure "timeout", "panic" or
// "tool_error". Empty for success.
func errorType(out *runtime.Outcome) string {
	switch out.Status {
	case runtime.StatusOK:
		return ""
	case runtime.StatusRefused:
		return "refused." + string(out.Stage)
	}
	return phaseErrorType(out.Err)
}

func phaseErrorType(err error) string {
	if _, ok := errors.AsType[*runtime.TimeoutError](err); ok {
		return "timeout"
	}
	if _, ok := errors.AsType[*runtime.PanicError](err); ok {
		return "panic"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	return "tool_error"
}

// previewAttrs are what the preview says of a call: its side effect and
// the sandbox mode its subject names. The subject itself is not recorded:
// it is for rules, and long.
func previewAttrs(p *contract.Preview) []attribute.KeyValue {
	attrs := []attribute.KeyValue{KeySideEffect.String(p.SideEffect.String())}
	if mode := sandboxMode(p.Subject); mode != "" {
		attrs = append(attrs, KeySandboxMode.String(mode))
	}
	return attrs
}

// sandboxMode is the subject's "sandbox": {"mode": ...}, if it has one.
func sandboxMode(subject json.RawMessage) string {
	if len(subject) == 0 {
		return ""
	}
	var s struct {
		Sandbox struct {
			Mode string `json:"mode"`
		} `json:"sandbox"`
	}
	if json.Unmarshal(subject, &s) != nil {
		return ""
	}
	return s.Sandbox.Mode
}

// verdictAttrs are the gate's decision, the layer that decided and the
// deciding rule (its file and number, for a loaded one).
func verdictAttrs(v *approver.Verdict) []attribute.KeyValue {
	decision := "deny"
	if v.Allow {
		decision = "allow"
	}
	attrs := []attribute.KeyValue{KeyGateDecision.String(decision), KeyGateLayer.String(layerOf(v))}
	if v.Rule != nil && v.Rule.File != "" {
		attrs = append(attrs, KeyGateRule.String(v.Rule.File+":"+strconv.Itoa(v.Rule.Number)))
	}
	return attrs
}

// layerOf is who decided: the deciding rule's layer (system, operator,
// workspace, session), or the verdict's source when no rule did
// (approver, read_only, fail_closed).
func layerOf(v *approver.Verdict) string {
	if v.Source == approver.SourceRule && v.Rule != nil {
		if b, err := v.Rule.Scope.MarshalText(); err == nil {
			return string(b)
		}
	}
	return string(v.Source)
}

// StartMCPRequest starts a client span "{mcp.method.name} {target}" for a
// request basis sends to an MCP server (mcpbind's RequestObserver), and
// puts its trace context in the returned context, which mcpbind sends in
// params._meta. The request's JSON-RPC id ([contract.MCPRequest].RequestID)
// is read when it ends: the id is given as the request is written.
func (o *Observer) StartMCPRequest(ctx context.Context, r contract.MCPRequest) (context.Context, func(error)) {
	start := time.Now()
	ctx, span := o.startMCPSpan(ctx, r, trace.SpanKindClient, KeyMCPServer.String(r.Server))
	return ctx, func(err error) {
		t := ""
		if err != nil {
			// The type alone: a server's message may quote anything.
			t = "mcp_error"
			if errors.Is(err, context.DeadlineExceeded) {
				t = "timeout"
			} else if errors.Is(err, context.Canceled) {
				t = "canceled"
			}
		}
		o.endMCPSpan(ctx, span, r, t, o.mcpDur, start)
	}
}

// startMCPSpan starts the span "{mcp.method.name} {target}" of an MCP
// request, sent or answered, with the conventions' attributes and extra,
// and puts its trace context in the returned context also as a
// [contract.TraceContext].
func (o *Observer) startMCPSpan(ctx context.Context, r contract.MCPRequest, kind trace.SpanKind, extra ...attribute.KeyValue) (context.Context, trace.Span) {
	name := r.Method
	if r.Target != "" {
		name += " " + r.Target
	}
	attrs := append([]attribute.KeyValue{KeyMCPMethod.String(r.Method)}, extra...)
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
	ctx, span := o.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	if span.SpanContext().IsValid() {
		carrier := propagation.MapCarrier{}
		o.prop.Inject(ctx, carrier)
		ctx = contract.WithTraceContext(ctx, contract.TraceContext{Parent: carrier.Get("traceparent"), State: carrier.Get("tracestate")})
	}
	return ctx, span
}

// endMCPSpan ends an MCP request's span: its JSON-RPC id, known only once
// the request was written, its error.type (empty: success), and its
// duration in hist.
func (o *Observer) endMCPSpan(ctx context.Context, span trace.Span, r contract.MCPRequest, errorType string, hist metric.Float64Histogram, start time.Time) {
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
	hist.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
}
