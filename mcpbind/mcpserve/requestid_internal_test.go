package mcpserve

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type nopObserver struct{}

func (nopObserver) StartServedRequest(ctx context.Context, _ contract.MCPRequest) (context.Context, func(string)) {
	return ctx, nil
}

// Only a server with an observer wraps its transport, and only the
// SDK's stdio and io transports, whose connections set no Extra of
// their own.
func TestObservedTransport(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	mem, _ := mcp.NewInMemoryTransports()
	tests := []struct {
		name     string
		observer RequestObserver
		t        mcp.Transport
		wrapped  bool
	}{
		{"stdio, no observer", nil, &mcp.StdioTransport{}, false},
		{"io, no observer", nil, StdioTransport(r, w), false},
		{"stdio", nopObserver{}, &mcp.StdioTransport{}, true},
		{"io", nopObserver{}, StdioTransport(r, w), true},
		{"in memory", nopObserver{}, mem, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{opts: ServerOptions{Observer: tt.observer}}
			got := s.observedTransport(tt.t)
			_, wrapped := got.(*idTransport)
			if wrapped != tt.wrapped || (!wrapped && got != tt.t) {
				t.Errorf("observedTransport = %T (wrapped %v), want wrapped %v", got, wrapped, tt.wrapped)
			}
		})
	}
}

// The guard finds the top-level arrays of a JSON stream, whatever the
// strings and nested arrays hold, however the reads split it.
func TestBatchGuardScan(t *testing.T) {
	tests := []struct {
		in   string
		want []int // offsets of top-level '['
	}{
		{`{"a":[1,[2]]}` + "\n" + `[{}]`, []int{14}},
		{`{"s":"[\"[","t":"\\"}` + "\n", nil},
		{`{"s":"\\\"["}[`, []int{13}},
		{"  [ ] [", []int{2, 6}},
		{`{"x":{"y":[]}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			g := &batchGuard{}
			var got []int
			for i := range len(tt.in) {
				if g.batchStarts(tt.in[i]) {
					got = append(got, i)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("batches at (-want +got):\n%s", diff)
			}
		})
	}
}

// Once refusing, the guard returns the bytes before a batch with the
// error, and the error after.
func TestBatchGuardRefuses(t *testing.T) {
	g := &batchGuard{r: io.NopCloser(strings.NewReader(`{"a":[1]}` + "\n" + `[{}]`))}
	g.refuse.Store(true)
	buf := make([]byte, 64)
	n, err := g.Read(buf)
	if string(buf[:n]) != `{"a":[1]}`+"\n" || err != errBatch {
		t.Errorf("Read = %q, %v; want the first message and errBatch", buf[:n], err)
	}
	if n, err := g.Read(buf); n != 0 || err != errBatch {
		t.Errorf("Read after = %d, %v; want 0, errBatch", n, err)
	}
}
