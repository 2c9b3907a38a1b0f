//go:build unix

package mcpserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proxied serves, through a basis runtime that allows every call, the
// tools of a real MCP server (mcpbind's test server over streamable
// HTTP) to one in-memory client, and returns that client.
func proxied(t *testing.T, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return proxiedVersion(t, testserver.New(testserver.Options{}), copts, "")
}

// proxiedVersion is proxied with an upstream server of the test's
// choosing and the client's protocol version ("" for the newest).
func proxiedVersion(t *testing.T, up *mcp.Server, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upstream.Close)
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Host: []mcpbind.ServerConfig{{Name: "ts", Type: mcpbind.TypeHTTP, URL: upstream.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	m := mcpbind.NewManager(cfg, nil)
	t.Cleanup(func() { m.Close() })
	tools, err := m.ServerTools(context.Background(), "ts")
	if err != nil {
		t.Fatal(err)
	}
	b := runtime.NewBuilder()
	if err := b.AddMCP(tools...); err != nil {
		t.Fatal(err)
	}
	gate, err := approver.NewGate(approver.AllowAll(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserve.NewServer(mcpserve.NewRuntimeRoster(rt), nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-served })
	return cs
}

// What an upstream tool returns reaches basis serve's client unchanged:
// text, image, audio, embedded resources, a resource link, structured
// content and _meta, for a result and an isError result alike.
func TestServeContentPassesThrough(t *testing.T) {
	cs := proxied(t, nil)
	asJSON := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, isError := range []bool{false, true} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__ts__mixed", Arguments: map[string]any{"Error": isError}})
		if err != nil {
			t.Fatal(err)
		}
		want := testserver.MixedResult(isError, "")
		want.Meta = mcp.Meta{"example.com/trace": "t-"}
		got := *res
		// The client's own SDK marks what hop the result came over.
		delete(got.Meta, "io.modelcontextprotocol/serverInfo")
		gotJSON := asJSON(&got).(map[string]any)
		delete(gotJSON, "resultType") // the protocol's, set by each hop's SDK
		if diff := cmp.Diff(asJSON(want), any(gotJSON)); diff != "" {
			t.Errorf("isError %v: result (-upstream +client):\n%s", isError, diff)
		}
	}
}
