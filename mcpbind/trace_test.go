//go:build unix

package mcpbind_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
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
