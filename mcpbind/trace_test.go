//go:build unix

package mcpbind_test

import (
	"context"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
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
