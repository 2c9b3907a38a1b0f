//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP endpoint that keeps every request it is
// sent: the raw bodies, for canaries, and the decoded spans and metrics.
type otlpReceiver struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []string
	traces  []*tracepb.ExportTraceServiceRequest
	metrics []*metricpb.ExportMetricsServiceRequest
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.bodies = append(r.bodies, body)
		r.headers = append(r.headers, req.Header.Get("Authorization"))
		var msg proto.Message
		switch req.URL.Path {
		case "/v1/traces":
			m := &tracepb.ExportTraceServiceRequest{}
			r.traces, msg = append(r.traces, m), m
		case "/v1/metrics":
			m := &metricpb.ExportMetricsServiceRequest{}
			r.metrics, msg = append(r.metrics, m), m
		default:
			http.NotFound(w, req)
			return
		}
		if err := proto.Unmarshal(body, msg); err != nil {
			t.Errorf("%s: not an OTLP request: %v", req.URL.Path, err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// otlpSpan is a received span as the test compares it.
type otlpSpan struct {
	Name, Parent string
	Attrs        map[string]string
	traceID      string
	id           string
	parentID     string
}

func (r *otlpReceiver) spans() []otlpSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []otlpSpan
	for _, req := range r.traces {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, otlpSpan{Name: s.Name, Attrs: otlpAttrs(s.Attributes), traceID: hex.EncodeToString(s.TraceId),
						id: hex.EncodeToString(s.SpanId), parentID: hex.EncodeToString(s.ParentSpanId)})
				}
			}
		}
	}
	names := map[string]string{}
	for _, s := range out {
		names[s.id] = s.Name
	}
	for i := range out {
		out[i].Parent = names[out[i].parentID]
	}
	slices.SortFunc(out, func(a, b otlpSpan) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func otlpAttrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return m
}

// denials is the denial counter's points: layer -> count.
func (r *otlpReceiver) denials() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int64{}
	for _, req := range r.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name != "basis.gate.denials" {
						continue
					}
					for _, p := range m.GetSum().GetDataPoints() {
						out[otlpAttrs(p.Attributes)["basis.gate.layer"]] += p.GetAsInt()
					}
				}
			}
		}
	}
	return out
}

const (
	otelArgCanary    = "canary-argument-71"
	otelEnvCanary    = "canary-env-72"
	otelHeaderCanary = "canary-otlp-key-73"
	agentTrace       = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentSpan        = "00f067aa0ba902b7"
)

// basis call of a declared tool, exported to a real OTLP/HTTP receiver:
// the span tree in the conventions, inside the trace of the agent that
// started basis (TRACEPARENT), the program given the execute span as its
// TRACEPARENT, a denial's span and counter; and no secret — an
// environment value, an argument, the exporter's own key — in anything
// exported, nor the exporter's key in the program's environment.
func TestBinaryCallExportsOTLP(t *testing.T) {
	rcv, url := newOTLPReceiver(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {
		"env": {"description": "Print the environment.", "input_schema": {"type": "object"}, "command": ["/usr/bin/env"]}
	}}`)
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(dir, "config"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + url, "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer " + otelHeaderCanary,
		"OTEL_SERVICE_NAME=basis-test", "GITHUB_TOKEN=" + otelEnvCanary, "TRACEPARENT=00-" + agentTrace + "-" + agentSpan + "-01"}
	run := func(approve string) (string, string) {
		cmd := exec.Command(basisBinary, "-C", ws, "call", "env", `{"password": "`+otelArgCanary+`"}`, "--approve", approve)
		cmd.Env = environ
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		return stdout.String(), stderr.String()
	}

	out, stderr := run("allow")
	vars := otelVars(out)
	if _, ok := vars["OTEL_EXPORTER_OTLP_HEADERS"]; ok {
		t.Errorf("the program was given the exporter's headers:\n%s", out)
	}
	spans := rcv.spans()
	if len(spans) != 4 {
		t.Fatalf("received %d spans, want 4 (stderr: %s):\n%+v", len(spans), stderr, spans)
	}
	type shape struct{ Name, Parent string }
	var got []shape
	for _, s := range spans {
		got = append(got, shape{s.Name, s.Parent})
		if s.traceID != agentTrace {
			t.Errorf("span %s is in trace %s, want the agent's %s", s.Name, s.traceID, agentTrace)
		}
	}
	want := []shape{{"basis.execute", "execute_tool env"}, {"basis.gate", "execute_tool env"}, {"basis.preview", "execute_tool env"}, {"execute_tool env", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span tree (-want +got):\n%s", diff)
	}
	call, exec := spans[3], spans[0]
	if call.parentID != agentSpan {
		t.Errorf("execute_tool's parent is %s, want the agent's span %s", call.parentID, agentSpan)
	}
	for k, v := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "env", "gen_ai.tool.type": "function",
		"basis.status": "ok", "basis.gate.decision": "allow", "basis.gate.layer": "approver", "basis.side_effect": "process"} {
		if call.Attrs[k] != v {
			t.Errorf("execute_tool %s = %q, want %q", k, call.Attrs[k], v)
		}
	}
	if !strings.HasPrefix(call.Attrs["gen_ai.tool.call.id"], "cli-") || call.Attrs["basis.sandbox.mode"] == "" {
		t.Errorf("execute_tool attributes %v: want a cli- call id and the sandbox mode", call.Attrs)
	}
	if wantTP := "00-" + agentTrace + "-" + exec.id + "-01"; vars["TRACEPARENT"] != wantTP {
		t.Errorf("the program's TRACEPARENT is %q, want the execute span's %q", vars["TRACEPARENT"], wantTP)
	}

	// A denial: its span says who decided, and the counter counts it.
	if _, stderr := run("deny"); !strings.Contains(stderr, "refused") {
		t.Fatalf("the denied call was not refused: %s", stderr)
	}
	var denied *otlpSpan
	for _, s := range rcv.spans() {
		if s.Name == "execute_tool env" && s.Attrs["basis.gate.decision"] == "deny" {
			denied = &s
		}
	}
	if denied == nil || denied.Attrs["error.type"] != "refused.denied" || denied.Attrs["basis.gate.layer"] != "approver" {
		t.Errorf("no denied execute_tool span with error.type refused.denied, layer approver: %+v", denied)
	}
	if diff := cmp.Diff(map[string]int64{"approver": 1}, rcv.denials()); diff != "" {
		t.Errorf("denial counter (-want +got):\n%s", diff)
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	for _, h := range rcv.headers {
		if h != "Bearer "+otelHeaderCanary {
			t.Errorf("a request came with Authorization %q, want the configured header", h)
		}
	}
	for _, body := range rcv.bodies {
		for _, c := range []string{otelArgCanary, otelEnvCanary, otelHeaderCanary} {
			if bytes.Contains(body, []byte(c)) {
				t.Errorf("an exported request holds the secret %q", c)
			}
		}
	}
}

// With no OTEL_* variable basis makes no provider: nothing to observe.
func TestTelemetryOffWithoutVariables(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		on      bool
	}{
		{"none", []string{"PATH=/bin"}, false},
		{"endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}, true},
		{"traces endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:1/v1/traces"}, true},
		{"service name", []string{"OTEL_SERVICE_NAME=x"}, true},
		{"disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SDK_DISABLED=true"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{environ: tt.environ, stderr: io.Discard}
			tel := startTelemetry(t.Context(), e)
			defer tel.close()
			if got := tel != nil && tel.observer() != nil; got != tt.on {
				t.Errorf("startTelemetry made an observer: %v, want %v", got, tt.on)
			}
		})
	}
}

// otelVars reads the NAME=value lines /usr/bin/env printed.
func otelVars(text string) map[string]string {
	vars := map[string]string{}
	for line := range strings.SplitSeq(text, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			vars[name] = value
		}
	}
	return vars
}

// grpcTraces is an OTLP/gRPC trace receiver.
type grpcTraces struct {
	tracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcTraces) Export(_ context.Context, req *tracepb.ExportTraceServiceRequest) (*tracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				g.names = append(g.names, s.Name)
			}
		}
	}
	return &tracepb.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over gRPC.
func TestBinaryCallExportsOTLPgRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rcv := &grpcTraces{}
	tracepb.RegisterTraceServiceServer(srv, rcv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {
		"env": {"description": "Print the environment.", "input_schema": {"type": "object"}, "command": ["/usr/bin/env"]}
	}}`)
	cmd := exec.Command(basisBinary, "-C", ws, "call", "env", `{}`, "--approve", "allow")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(dir, "config"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + lis.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_METRICS_EXPORTER=none"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("basis call: %v\n%s", err, stderr.String())
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	slices.Sort(rcv.names)
	if diff := cmp.Diff([]string{"basis.execute", "basis.gate", "basis.preview", "execute_tool env"}, rcv.names); diff != "" {
		t.Errorf("spans received over gRPC (-want +got):\n%s\nstderr:\n%s", diff, stderr.String())
	}
}
