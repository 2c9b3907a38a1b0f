//go:build unix

package mcpbind

import (
	"context"
	"testing"
)

type markKey struct{}

// A server's request reaches the call it came during: the call whose
// context the SDK handed on, else the only call in flight; with none or
// several in flight it reaches nobody, so one client's user is never
// asked about another client's call.
func TestCallFor(t *testing.T) {
	mark := func(name string) context.Context { return context.WithValue(context.Background(), markKey{}, name) }
	tests := []struct {
		name    string
		calls   []string
		handler func(entered []context.Context) context.Context
		want    string // "" for no call
	}{
		{"none in flight", nil, func([]context.Context) context.Context { return context.Background() }, ""},
		{"one in flight", []string{"a"}, func([]context.Context) context.Context { return context.Background() }, "a"},
		{"two in flight", []string{"a", "b"}, func([]context.Context) context.Context { return context.Background() }, ""},
		{"two in flight, the SDK names the call", []string{"a", "b"}, func(e []context.Context) context.Context { return e[1] }, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in inflight
			var entered []context.Context
			for _, c := range tt.calls {
				ctx, leave := in.enter(mark(c))
				defer leave()
				entered = append(entered, ctx)
			}
			got, err := in.callFor(tt.handler(entered))
			name := ""
			if err == nil {
				name, _ = got.Value(markKey{}).(string)
			}
			if name != tt.want {
				t.Errorf("callFor reached %q (%v), want %q", name, err, tt.want)
			}
		})
	}
}
