//go:build unix

package mcpbind_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call whose context carries a trace context sends it to the server in
// params._meta (traceparent, tracestate); without one, none is sent.
func TestTraceContextInMeta(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name string
		tc   *contract.TraceContext
		want string
	}{
		{"none", nil, "traceparent=<nil> tracestate=<nil>"},
		{"parent", &contract.TraceContext{Parent: parent}, "traceparent=" + parent + " tracestate=<nil>"},
		{"parent and state", &contract.TraceContext{Parent: parent, State: "v=1"}, "traceparent=" + parent + " tracestate=v=1"},
	}
	m := newManager(t, &mcpbind.ManagerOptions{}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	inMemory(t, m, testserver.Options{TraceContext: true})
	tl := tool(t, m, "s", "tracecontext")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.tc != nil {
				ctx = contract.WithTraceContext(ctx, *tt.tc)
			}
			res, err := tl.Execute(ctx, contract.Call{ID: "1", Input: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("the server saw %q, want %q", res.Text, tt.want)
			}
		})
	}
}

// mcpRecorder is a RequestObserver that writes down each request and
// hands the server a trace context of its own.
type mcpRecorder struct {
	mu   sync.Mutex
	seen []string
}

const observerParent = "00-11111111111111111111111111111111-2222222222222222-01"

func (r *mcpRecorder) StartMCPRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, fmt.Sprintf("%s %q server=%s transport=%s session=%v", req.Method, req.Target, req.Server, req.Transport, req.SessionID != ""))
	return contract.WithTraceContext(ctx, contract.TraceContext{Parent: observerParent}), func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen = append(r.seen, fmt.Sprintf("end %s err=%v", req.Method, err != nil))
	}
}

// The observer hears every request sent, and the trace context it puts
// in the request's context (its span's) is what the server receives.
func TestRequestObserver(t *testing.T) {
	rec := &mcpRecorder{}
	m := newManager(t, &mcpbind.ManagerOptions{Observer: rec}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	inMemory(t, m, testserver.Options{TraceContext: true})
	tl := tool(t, m, "s", "tracecontext")
	ctx := contract.WithTraceContext(context.Background(), contract.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	res, err := tl.Execute(ctx, contract.Call{ID: "1", Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := "traceparent=" + observerParent + " tracestate=<nil>"; res.Text != want {
		t.Errorf("the server saw %q, want the observer's %q", res.Text, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{
		`server/discover "" server=s transport=pipe session=false`, "end server/discover err=false",
		`subscriptions/listen "" server=s transport=pipe session=false`, "end subscriptions/listen err=false",
		`tools/list "" server=s transport=pipe session=false`, "end tools/list err=false",
		`tools/call "tracecontext" server=s transport=pipe session=false`, "end tools/call err=false",
	}
	if diff := cmp.Diff(want, rec.seen); diff != "" {
		t.Errorf("requests observed (-want +got):\n%s", diff)
	}
}

// Over streamable HTTP the trace context travels as the traceparent and
// tracestate headers too, the same the server receives in params._meta:
// the request's (or its observer's span's) trace context, none without.
func TestTraceContextInHTTPHeaders(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name      string
		observer  bool
		tc        *contract.TraceContext
		wantMeta  string
		wantHeads string
	}{
		{"none", false, nil, "traceparent=<nil> tracestate=<nil>", " "},
		{"the call's", false, &contract.TraceContext{Parent: parent, State: "v=1"}, "traceparent=" + parent + " tracestate=v=1", parent + " v=1"},
		{"the observer's", true, &contract.TraceContext{Parent: parent, State: "v=1"}, "traceparent=" + observerParent + " tracestate=<nil>", observerParent + " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var heads []string // the headers of each tools/call request
			srv := testserver.New(testserver.Options{TraceContext: true})
			mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"tools/call"`)) {
					mu.Lock()
					heads = append(heads, r.Header.Get("Traceparent")+" "+r.Header.Get("Tracestate"))
					mu.Unlock()
				}
				mcpHandler.ServeHTTP(w, r)
			}))
			t.Cleanup(web.Close)
			opts := &mcpbind.ManagerOptions{}
			if tt.observer {
				opts.Observer = &mcpRecorder{}
			}
			m := newManager(t, opts, mcpbind.ServerConfig{Name: "web", Type: mcpbind.TypeHTTP, URL: web.URL})
			tl := tool(t, m, "web", "tracecontext")
			ctx := context.Background()
			if tt.tc != nil {
				ctx = contract.WithTraceContext(ctx, *tt.tc)
			}
			res, err := tl.Execute(ctx, contract.Call{ID: "1", Input: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.wantMeta {
				t.Errorf("the server saw %q in _meta, want %q", res.Text, tt.wantMeta)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]string{tt.wantHeads}, heads); diff != "" {
				t.Errorf("tools/call headers traceparent, tracestate (-want +got):\n%s", diff)
			}
		})
	}
}
