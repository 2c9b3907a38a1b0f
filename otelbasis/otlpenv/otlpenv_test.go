//go:build unix

package otlpenv

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
	metricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

const (
	agentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentSpan  = "00f067aa0ba902b7"
)

// With no OTEL_* variable nothing is made: nothing to observe.
func TestEnabled(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		on      bool
	}{
		{"none", []string{"PATH=/bin"}, false},
		{"endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}, true},
		{"traces endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:1/v1/traces"}, true},
		{"metrics endpoint", []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://127.0.0.1:1/v1/metrics"}, true},
		{"service name", []string{"OTEL_SERVICE_NAME=x"}, true},
		{"disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SDK_DISABLED=true"}, false},
		{"disabled, spelt loosely", []string{"OTEL_SERVICE_NAME=x", "OTEL_SDK_DISABLED= TRUE "}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := enabled(tt.environ); got != tt.on {
				t.Errorf("enabled = %v, want %v", got, tt.on)
			}
			if tt.on {
				return
			}
			tel, err := New(t.Context(), tt.environ, nil)
			if err != nil || tel != nil {
				t.Fatalf("New = %+v, %v with telemetry off; want nil, nil", tel, err)
			}
			// A nil *Telemetry is usable as it is, and its observers are
			// nil interfaces, not nil pointers in one.
			ctx := t.Context()
			if tel.Observer() != nil || tel.RequestObserver() != nil || tel.Parent(ctx) != ctx || tel.Shutdown(ctx) != nil {
				t.Errorf("a nil Telemetry did something")
			}
		})
	}
}

func TestProtocol(t *testing.T) {
	tests := []struct {
		environ []string
		want    string
		err     bool
	}{
		{nil, "http/protobuf", false},
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, "grpc", false},
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf"}, "http/protobuf", false},
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, "", true},
	}
	for _, tt := range tests {
		got, err := protocol(tt.environ, "TRACES")
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("protocol(%q) = %q, %v; want %q (error %v)", tt.environ, got, err, tt.want, tt.err)
		}
	}
}

// An unsupported protocol is an error that says what to set, and New
// makes nothing.
func TestNewUnsupportedProtocol(t *testing.T) {
	for _, signal := range []string{"TRACES", "METRICS"} {
		environ := []string{"OTEL_SERVICE_NAME=x", "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL=http/json"}
		tel, err := New(t.Context(), environ, nil)
		if err == nil || tel != nil {
			t.Fatalf("%s: New = %+v, %v; want an error", signal, tel, err)
		}
		if want := `OTEL_EXPORTER_OTLP_PROTOCOL "http/json" is not supported; set grpc or http/protobuf`; err.Error() != want {
			t.Errorf("%s: error %q, want %q", signal, err, want)
		}
	}
}

// received is what a receiver decoded: span names with their parents'
// names, trace ids, resource attributes and metric names.
type received struct {
	mu       sync.Mutex
	spans    map[string]span // by span id
	resource map[string]string
	metrics  []string
}

type span struct{ name, traceID, parentID string }

func (r *received) traces(req *tracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spans == nil {
		r.spans = map[string]span{}
	}
	for _, rs := range req.ResourceSpans {
		r.resource = attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans[hex.EncodeToString(s.SpanId)] = span{s.Name, hex.EncodeToString(s.TraceId), hex.EncodeToString(s.ParentSpanId)}
			}
		}
	}
}

func (r *received) metricNames(req *metricpb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				r.metrics = append(r.metrics, m.Name)
			}
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return m
}

// tree is each received span as "name < parent name", sorted, and the
// trace ids seen.
func (r *received) tree() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out, ids []string
	for _, s := range r.spans {
		parent := s.parentID
		if p, ok := r.spans[s.parentID]; ok {
			parent = p.name
		}
		out = append(out, s.name+" < "+parent)
		if !slices.Contains(ids, s.traceID) {
			ids = append(ids, s.traceID)
		}
	}
	slices.Sort(out)
	return out, ids
}

// httpReceiver is an OTLP/HTTP endpoint decoding what it is sent.
func httpReceiver(t testing.TB, r *received) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch req.URL.Path {
		case "/v1/traces":
			m := &tracepb.ExportTraceServiceRequest{}
			err = proto.Unmarshal(body, m)
			r.traces(m)
		case "/v1/metrics":
			m := &metricpb.ExportMetricsServiceRequest{}
			err = proto.Unmarshal(body, m)
			r.metricNames(m)
		default:
			http.NotFound(w, req)
			return
		}
		if err != nil {
			t.Errorf("%s: not an OTLP request: %v", req.URL.Path, err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type grpcTraces struct {
	tracepb.UnimplementedTraceServiceServer
	r *received
}

func (g grpcTraces) Export(_ context.Context, req *tracepb.ExportTraceServiceRequest) (*tracepb.ExportTraceServiceResponse, error) {
	g.r.traces(req)
	return &tracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	metricpb.UnimplementedMetricsServiceServer
	r *received
}

func (g grpcMetrics) Export(_ context.Context, req *metricpb.ExportMetricsServiceRequest) (*metricpb.ExportMetricsServiceResponse, error) {
	g.r.metricNames(req)
	return &metricpb.ExportMetricsServiceResponse{}, nil
}

// grpcReceiver is an OTLP/gRPC endpoint decoding what it is sent.
func grpcReceiver(t testing.TB, r *received) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	tracepb.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	metricpb.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return "http://" + lis.Addr().String()
}

// tool is a host tool that runs /bin/cat on its input, as a declared
// tool's program would.
type tool struct{}

func (tool) Descriptor() contract.Descriptor {
	return contract.Descriptor{Name: "cat", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`),
		SideEffect: contract.SideEffectLocalState, Binding: contract.BindingHost, Source: "test"}
}

func (tool) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	return contract.Preview{SideEffect: contract.SideEffectLocalState, Subject: call.Input, Summary: "cat"}, nil
}

func (tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	cmd := exec.CommandContext(ctx, "/bin/cat")
	cmd.Stdin = bytes.NewReader(call.Input)
	out, err := cmd.Output()
	return contract.Result{Text: string(out)}, err
}

// newRuntime is a runtime with the cat tool, allowed by a rule, and obs.
func newRuntime(t testing.TB, obs runtime.Observer) *runtime.Runtime {
	return newRuntimeOf(t, tool{}, obs)
}

// newRuntimeOf is a runtime with tl (named cat), allowed by a rule, and
// obs.
func newRuntimeOf(t testing.TB, tl contract.ExecutableTool, obs runtime.Observer) *runtime.Runtime {
	gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: []approver.Rule{
		{Tool: "cat", Decision: approver.RuleAllow, Source: approver.AnySource, Scope: approver.ScopeOperator},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b := runtime.NewBuilder()
	if err := b.Add(tl); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(&runtime.Options{Gate: gate, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// A call exported to a real receiver, over http/protobuf and over grpc:
// the span tree inside the trace TRACEPARENT names, the resource, the
// call's metric; and an exporter switched off by OTEL_<SIGNAL>_EXPORTER
// sends nothing.
func TestExport(t *testing.T) {
	tests := []struct {
		name        string
		grpc        bool
		vars        map[string]string
		wantSpans   bool
		wantMetrics bool
	}{
		{name: "http", wantSpans: true, wantMetrics: true},
		{name: "grpc", grpc: true, vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantSpans: true, wantMetrics: true},
		{name: "no traces", vars: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, wantMetrics: true},
		{name: "no metrics", grpc: true, vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_METRICS_EXPORTER": "none"}, wantSpans: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &received{}
			url := ""
			if tt.grpc {
				url = grpcReceiver(t, r)
			} else {
				url = httpReceiver(t, r)
			}
			// The exporters read their endpoint from the process's
			// environment.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
			for k, v := range tt.vars {
				t.Setenv(k, v)
			}
			environ := append(os.Environ(), "TRACEPARENT=00-"+agentTrace+"-"+agentSpan+"-01")
			tel, err := New(t.Context(), environ, &Options{ServiceVersion: "v9.9.9"})
			if err != nil || tel == nil {
				t.Fatalf("New = %v, %v", tel, err)
			}
			if tel.Observer() == nil || tel.RequestObserver() == nil {
				t.Fatal("no observer")
			}
			rt := newRuntime(t, tel.Observer())
			out := rt.Call(tel.Parent(t.Context()), "cat", contract.Call{ID: "c1", Input: json.RawMessage(`{"a":1}`)})
			if out.Status != runtime.StatusOK {
				t.Fatalf("call: %+v", out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}

			tree, ids := r.tree()
			var want, wantIDs []string
			if tt.wantSpans {
				want = []string{"basis.execute < execute_tool cat", "basis.gate < execute_tool cat", "basis.preview < execute_tool cat", "execute_tool cat < " + agentSpan}
				wantIDs = []string{agentTrace}
			}
			if diff := cmp.Diff(want, tree); diff != "" {
				t.Errorf("span tree (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantIDs, ids); diff != "" {
				t.Errorf("trace ids (-want +got):\n%s", diff)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if tt.wantSpans && (r.resource["service.name"] != "basis" || r.resource["service.version"] != "v9.9.9") {
				t.Errorf("resource %v: want service.name basis, service.version v9.9.9", r.resource)
			}
			if got := slices.Contains(r.metrics, "gen_ai.execute_tool.duration"); got != tt.wantMetrics {
				t.Errorf("metrics received %q; want gen_ai.execute_tool.duration: %v", r.metrics, tt.wantMetrics)
			}
		})
	}
}

// OTEL_SERVICE_NAME names the service over Options.ServiceName.
func TestServiceName(t *testing.T) {
	r := &received{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", httpReceiver(t, r))
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	for _, tt := range []struct{ env, opt, want string }{{"", "host", "host"}, {"agent-tools", "host", "agent-tools"}} {
		t.Setenv("OTEL_SERVICE_NAME", tt.env)
		tel, err := New(t.Context(), os.Environ(), &Options{ServiceName: tt.opt})
		if err != nil {
			t.Fatal(err)
		}
		newRuntime(t, tel.Observer()).Call(t.Context(), "cat", contract.Call{ID: "c1", Input: json.RawMessage(`{}`)})
		if err := tel.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		if got := r.resource["service.name"]; got != tt.want {
			t.Errorf("OTEL_SERVICE_NAME %q, ServiceName %q: service.name %q, want %q", tt.env, tt.opt, got, tt.want)
		}
		r.mu.Unlock()
	}
}
