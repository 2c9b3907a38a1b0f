//go:build unix

package otelbasis_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/otelbasis"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

const canary = "canary-secret-9f3b"

// tool is a host's tool that remembers the trace context its Execute
// saw, and fails when told to.
type tool struct {
	name   string
	effect contract.SideEffect
	fail   bool
	seen   *contract.TraceContext
}

func (t *tool) Descriptor() contract.Descriptor {
	return contract.Descriptor{Name: t.name, Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`),
		SideEffect: t.effect, Binding: contract.BindingHost, Source: "/ws/.basis/tools.json"}
}

func (t *tool) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	subject, err := contract.CanonicalJSON(map[string]any{"tool": t.name, "sandbox": map[string]any{"mode": "workspace-write"}})
	return contract.Preview{SideEffect: t.effect, Subject: subject, Summary: t.name}, err
}

func (t *tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	if tc, ok := contract.TraceContextOf(ctx); ok {
		t.seen = &tc
	}
	if t.fail {
		return contract.Result{}, errors.New("failed: " + canary)
	}
	return contract.Result{Text: "result " + canary}, nil
}

type fixture struct {
	rt      *runtime.Runtime
	spans   *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader
	tools   map[string]*tool
}

func newFixture(t *testing.T, opts *otelbasis.Options) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewInMemoryExporter(), metrics: sdkmetric.NewManualReader(), tools: map[string]*tool{
		"echo":   {name: "echo", effect: contract.SideEffectLocalState},
		"broken": {name: "broken", effect: contract.SideEffectLocalState, fail: true},
		"deploy": {name: "deploy", effect: contract.SideEffectExternal},
	}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.metrics))
	obs, err := otelbasis.NewObserver(tp, mp, opts)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: []approver.Rule{
		{Tool: "echo", Decision: approver.RuleAllow, Source: approver.AnySource, Scope: approver.ScopeOperator, File: "/etc/basis/rules.json", Number: 2},
		{Tool: "broken", Decision: approver.RuleAllow, Source: approver.AnySource, Scope: approver.ScopeOperator},
		{Tool: "deploy", Decision: approver.RuleDeny, Reason: "never", Scope: approver.ScopeWorkspace, File: "/ws/.basis/rules.json", Number: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b := runtime.NewBuilder()
	for _, tl := range f.tools {
		if err := b.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	if f.rt, err = b.Build(&runtime.Options{Gate: gate, Observer: obs}); err != nil {
		t.Fatal(err)
	}
	return f
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// span is one finished span, as the test compares it.
type span struct {
	Name   string
	Parent string
	Status codes.Code
	Attrs  map[string]string
}

func (f *fixture) tree(t *testing.T) []span {
	t.Helper()
	got := f.spans.GetSpans()
	names := map[string]string{}
	for _, s := range got {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	var out []span
	for _, s := range got {
		out = append(out, span{Name: s.Name, Parent: names[s.Parent.SpanID().String()], Status: s.Status.Code, Attrs: attrs(s.Attributes)})
	}
	slices.SortFunc(out, func(a, b span) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func TestCallSpans(t *testing.T) {
	base := func(tool string) map[string]string {
		return map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.call.id": "c1",
			"gen_ai.tool.type": "function", "basis.source": "/ws/.basis/tools.json"}
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		tool string
		want []span
	}{
		{"allowed", "echo", []span{
			{Name: "basis.execute", Parent: "execute_tool echo", Attrs: map[string]string{"gen_ai.tool.name": "echo"}},
			{Name: "basis.gate", Parent: "execute_tool echo", Attrs: map[string]string{"gen_ai.tool.name": "echo",
				"basis.gate.decision": "allow", "basis.gate.layer": "operator", "basis.gate.rule": "/etc/basis/rules.json:2"}},
			{Name: "basis.preview", Parent: "execute_tool echo", Attrs: map[string]string{"gen_ai.tool.name": "echo",
				"basis.side_effect": "local_state", "basis.sandbox.mode": "workspace-write"}},
			{Name: "execute_tool echo", Attrs: with(base("echo"), "basis.status", "ok", "basis.side_effect", "local_state",
				"basis.sandbox.mode", "workspace-write", "basis.gate.decision", "allow", "basis.gate.layer", "operator",
				"basis.gate.rule", "/etc/basis/rules.json:2")},
		}},
		{"denied", "deploy", []span{
			{Name: "basis.gate", Parent: "execute_tool deploy", Attrs: map[string]string{"gen_ai.tool.name": "deploy",
				"basis.gate.decision": "deny", "basis.gate.layer": "workspace", "basis.gate.rule": "/ws/.basis/rules.json:1"}},
			{Name: "basis.preview", Parent: "execute_tool deploy", Attrs: map[string]string{"gen_ai.tool.name": "deploy",
				"basis.side_effect": "external", "basis.sandbox.mode": "workspace-write"}},
			{Name: "execute_tool deploy", Status: codes.Error, Attrs: with(base("deploy"), "basis.status", "refused", "error.type", "refused.denied",
				"basis.refusal.stage", "denied", "basis.side_effect", "external", "basis.sandbox.mode", "workspace-write",
				"basis.gate.decision", "deny", "basis.gate.layer", "workspace", "basis.gate.rule", "/ws/.basis/rules.json:1")},
		}},
		{"failed", "broken", []span{
			{Name: "basis.execute", Parent: "execute_tool broken", Status: codes.Error, Attrs: map[string]string{"gen_ai.tool.name": "broken", "error.type": "tool_error"}},
			{Name: "basis.gate", Parent: "execute_tool broken", Attrs: map[string]string{"gen_ai.tool.name": "broken",
				"basis.gate.decision": "allow", "basis.gate.layer": "operator"}},
			{Name: "basis.preview", Parent: "execute_tool broken", Attrs: map[string]string{"gen_ai.tool.name": "broken",
				"basis.side_effect": "local_state", "basis.sandbox.mode": "workspace-write"}},
			{Name: "execute_tool broken", Status: codes.Error, Attrs: with(base("broken"), "basis.status", "tool_error", "error.type", "tool_error",
				"basis.side_effect", "local_state", "basis.sandbox.mode", "workspace-write", "basis.gate.decision", "allow", "basis.gate.layer", "operator")},
		}},
		{"unknown", "nosuch", []span{
			{Name: "execute_tool nosuch", Status: codes.Error, Attrs: map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "nosuch",
				"gen_ai.tool.call.id": "c1", "gen_ai.tool.type": "function", "basis.status": "refused", "error.type": "refused.unknown", "basis.refusal.stage": "unknown"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.rt.Call(t.Context(), tt.tool, contract.Call{ID: "c1", Input: json.RawMessage(`{"password":"` + canary + `"}`)})
			if diff := cmp.Diff(tt.want, f.tree(t)); diff != "" {
				t.Errorf("spans (-want +got):\n%s", diff)
			}
			for _, s := range f.spans.GetSpans() {
				if b, _ := json.Marshal(s); strings.Contains(string(b), canary) {
					t.Errorf("span %s holds the secret argument or result: %s", s.Name, b)
				}
			}
		})
	}
}

// The execute phase's context carries the trace context of its span: what
// a declared program receives as TRACEPARENT.
func TestExecuteCarriesTraceContext(t *testing.T) {
	f := newFixture(t, nil)
	f.rt.Call(t.Context(), "echo", contract.Call{ID: "c1", Input: json.RawMessage(`{}`)})
	seen := f.tools["echo"].seen
	if seen == nil {
		t.Fatal("Execute saw no trace context")
	}
	var exec sdktrace.ReadOnlySpan
	for _, s := range f.spans.GetSpans().Snapshots() {
		if s.Name() == "basis.execute" {
			exec = s
		}
	}
	sc := exec.SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if seen.Parent != want {
		t.Errorf("traceparent %q, want %q (the execute span)", seen.Parent, want)
	}
}

func TestRecordOptIn(t *testing.T) {
	f := newFixture(t, &otelbasis.Options{RecordArguments: true, RecordResults: true})
	f.rt.Call(t.Context(), "echo", contract.Call{ID: "c1", Input: json.RawMessage(`{"password":"` + canary + `"}`)})
	for _, s := range f.spans.GetSpans() {
		if s.Name != "execute_tool echo" {
			continue
		}
		a := attrs(s.Attributes)
		want := map[string]string{"gen_ai.tool.call.arguments": `{"password":"` + canary + `"}`, "gen_ai.tool.call.result": "result " + canary}
		got := map[string]string{"gen_ai.tool.call.arguments": a["gen_ai.tool.call.arguments"], "gen_ai.tool.call.result": a["gen_ai.tool.call.result"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("opted-in attributes (-want +got):\n%s", diff)
		}
		return
	}
	t.Fatal("no execute_tool span")
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, nil)
	for _, name := range []string{"echo", "deploy", "deploy", "broken"} {
		f.rt.Call(t.Context(), name, contract.Call{ID: "c1", Input: json.RawMessage(`{"k":"` + canary + `"}`)})
	}
	var rm metricdata.ResourceMetrics
	if err := f.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	type point struct {
		Attrs map[string]string
		N     int64
	}
	got := map[string][]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] = append(got[m.Name], point{attrs(p.Attributes.ToSlice()), int64(p.Count)})
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] = append(got[m.Name], point{attrs(p.Attributes.ToSlice()), p.Value})
				}
			}
		}
	}
	for _, ps := range got {
		slices.SortFunc(ps, func(a, b point) int { return strings.Compare(a.Attrs["gen_ai.tool.name"], b.Attrs["gen_ai.tool.name"]) })
	}
	want := map[string][]point{
		otelbasis.MetricToolDuration: {
			{map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "broken", "error.type": "tool_error"}, 1},
			{map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "deploy", "error.type": "refused.denied"}, 2},
			{map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo"}, 1},
		},
		otelbasis.MetricDenials: {{map[string]string{"gen_ai.tool.name": "deploy", "basis.gate.layer": "workspace"}, 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(rm); strings.Contains(string(b), canary) {
		t.Errorf("the metrics hold the secret argument: %s", b)
	}
}

// A call whose context carries a remote caller's trace context (basis
// serve's client) and no span continues that trace.
func TestCallContinuesRemoteTrace(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	f := newFixture(t, nil)
	ctx := contract.WithTraceContext(t.Context(), contract.TraceContext{Parent: "00-" + traceID + "-" + spanID + "-01"})
	f.rt.Call(ctx, "echo", contract.Call{ID: "c1", Input: json.RawMessage(`{}`)})
	for _, s := range f.spans.GetSpans() {
		if s.Name != "execute_tool echo" {
			continue
		}
		if got := s.SpanContext.TraceID().String(); got != traceID {
			t.Errorf("trace %s, want the caller's %s", got, traceID)
		}
		if got := s.Parent.SpanID().String(); got != spanID || !s.Parent.IsRemote() {
			t.Errorf("parent %s (remote %v), want the caller's %s", got, s.Parent.IsRemote(), spanID)
		}
		return
	}
	t.Fatal("no execute_tool span")
}

// An MCP request is a client span "{method} {target}" in the MCP
// conventions, under the caller's span, and its context carries the
// span's trace context for the server.
func TestMCPRequestSpan(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	obs, err := otelbasis.NewObserver(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("test").Start(t.Context(), "basis.execute")
	ctx, end := obs.StartMCPRequest(ctx, contract.MCPRequest{Method: "tools/call", Target: "search", Server: "gh",
		ProtocolVersion: "2025-11-25", SessionID: "s-1", Transport: "tcp", RequestID: func() string { return "7" }})
	tc, ok := contract.TraceContextOf(ctx)
	end(errors.New("boom " + canary))
	parent.End()

	var got sdktrace.ReadOnlySpan
	for _, s := range spans.GetSpans().Snapshots() {
		if s.Name() == "tools/call search" {
			got = s
		}
	}
	if got == nil {
		t.Fatal("no tools/call search span")
	}
	want := map[string]string{"mcp.method.name": "tools/call", "basis.mcp.server": "gh", "gen_ai.tool.name": "search",
		"gen_ai.operation.name": "execute_tool", "mcp.protocol.version": "2025-11-25", "mcp.session.id": "s-1",
		"network.transport": "tcp", "error.type": "mcp_error", "jsonrpc.request.id": "7"}
	if diff := cmp.Diff(want, attrs(got.Attributes())); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if got.SpanKind().String() != "client" || got.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("kind %v parent %v: want a client span under basis.execute", got.SpanKind(), got.Parent().SpanID())
	}
	wantTP := "00-" + got.SpanContext().TraceID().String() + "-" + got.SpanContext().SpanID().String() + "-01"
	if !ok || tc.Parent != wantTP {
		t.Errorf("the request's context carries %q (%v), want %q", tc.Parent, ok, wantTP)
	}
	if b, _ := json.Marshal(got.Status()); strings.Contains(string(b), canary) {
		t.Errorf("the span's status quotes the error: %s", b)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			found = found || m.Name == otelbasis.MetricMCPClientDuration
		}
	}
	if !found {
		t.Errorf("no %s histogram", otelbasis.MetricMCPClientDuration)
	}
}

// A request's jsonrpc.request.id is the id its RequestID gives when the
// request ends (the transport learns it after the span starts); none
// without one.
func TestMCPRequestID(t *testing.T) {
	tests := []struct {
		name  string
		later string // the id the transport writes down after the start
		nilFn bool
		want  string
	}{
		{name: "none", nilFn: true},
		{name: "not known"},
		{name: "number", later: "42", want: "42"},
		{name: "string", later: "req-a", want: "req-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
			obs, err := otelbasis.NewObserver(tp, sdkmetric.NewMeterProvider(), nil)
			if err != nil {
				t.Fatal(err)
			}
			id := ""
			r := contract.MCPRequest{Method: "tools/list", RequestID: func() string { return id }}
			if tt.nilFn {
				r.RequestID = nil
			}
			_, end := obs.StartMCPRequest(t.Context(), r)
			id = tt.later
			end(nil)
			got := spans.GetSpans().Snapshots()
			if len(got) != 1 {
				t.Fatalf("%d spans, want 1", len(got))
			}
			v, ok := attrs(got[0].Attributes())["jsonrpc.request.id"]
			if v != tt.want || ok != (tt.want != "") {
				t.Errorf("jsonrpc.request.id = %q (set %v), want %q", v, ok, tt.want)
			}
		})
	}
}
