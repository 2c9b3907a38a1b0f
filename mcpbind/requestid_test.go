//go:build unix

package mcpbind_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idRecorder is a RequestObserver that writes down, as each request
// ends, the JSON-RPC id mcpbind reports for it.
type idRecorder struct {
	mu   sync.Mutex
	ends []contract.MCPRequest
	ids  []string
}

func (r *idRecorder) StartMCPRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(error)) {
	return ctx, func(error) {
		id := ""
		if req.RequestID != nil {
			id = req.RequestID()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ends = append(r.ends, req)
		r.ids = append(r.ids, id)
	}
}

// idOf returns the id reported for the last request of method.
func (r *idRecorder) idOf(method string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ends) - 1; i >= 0; i-- {
		if r.ends[i].Method == method {
			return r.ids[i]
		}
	}
	return "<none>"
}

// httpIDs is an MCP server over HTTP that writes down the id of each
// tools/call POST it receives, decoded by the SDK.
func httpIDs(t *testing.T, sse bool) (url string, last func() string) {
	var mu sync.Mutex
	seen := "<none>"
	srv := testserver.New(testserver.Options{TraceContext: true})
	get := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler = mcp.NewStreamableHTTPHandler(get, nil)
	if sse {
		h = mcp.NewSSEHandler(get, nil)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				mu.Lock()
				seen = fmt.Sprint(req.ID.Raw())
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	return web.URL, func() string {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// The JSON-RPC id mcpbind reports for a request (the client span's
// jsonrpc.request.id) is the id the server received it under, over
// every transport mcpbind uses.
func TestRequestIDReported(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (mcpbind.ServerConfig, func(res string) string)
	}{
		{"stdio", func(t *testing.T) (mcpbind.ServerConfig, func(string) string) {
			return stdioServer("s", "-trace", "-ids"), func(res string) string {
				_, id, _ := strings.Cut(res, " id=")
				return id
			}
		}},
		{"streamable HTTP", func(t *testing.T) (mcpbind.ServerConfig, func(string) string) {
			url, last := httpIDs(t, false)
			return mcpbind.ServerConfig{Name: "s", Type: mcpbind.TypeHTTP, URL: url}, func(string) string { return last() }
		}},
		{"SSE", func(t *testing.T) (mcpbind.ServerConfig, func(string) string) {
			url, last := httpIDs(t, true)
			return mcpbind.ServerConfig{Name: "s", Type: mcpbind.TypeSSE, URL: url}, func(string) string { return last() }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, seen := tt.setup(t)
			rec := &idRecorder{}
			m := newManager(t, &mcpbind.ManagerOptions{Observer: rec}, cfg)
			tl := tool(t, m, "s", "tracecontext")
			for range 2 { // the second call's id is not the first's
				res, err := tl.Execute(context.Background(), contract.Call{ID: "1", Input: []byte(`{}`)})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := rec.idOf("tools/call"), seen(res.Text); got == "" || got != want {
					t.Errorf("reported id %q, the server saw %q", got, want)
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			// Every request has an id of its own.
			ids := map[string]bool{}
			for i, id := range rec.ids {
				if id == "" || ids[id] {
					t.Errorf("request %d (%s) reported id %q; all: %q", i, rec.ends[i].Method, id, rec.ids)
				}
				ids[id] = true
			}
		})
	}
}

// A request the observer hears of in memory (the test hook's transport)
// has its id too, and a client's requests are numbered from 1.
func TestRequestIDInMemory(t *testing.T) {
	rec := &idRecorder{}
	m := newManager(t, &mcpbind.ManagerOptions{Observer: rec}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	inMemory(t, m, testserver.Options{TraceContext: true})
	tl := tool(t, m, "s", "tracecontext")
	if _, err := tl.Execute(context.Background(), contract.Call{ID: "1", Input: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for i, r := range rec.ends {
		got = append(got, r.Method+" "+rec.ids[i])
	}
	want := []string{"server/discover 1", "subscriptions/listen 2", "tools/list 3", "tools/call 4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests and ids (-want +got):\n%s", diff)
	}
}
