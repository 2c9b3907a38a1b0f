//go:build unix

package mcpbind_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that speaks 2026-07-28 alone knows no initialize: a host that
// takes servers' questions, offered 2025-11-25 first, connects on the
// newest, and the server's input requests reach the host's ServerRequest.
func TestANewestOnlyServerAsksThroughInputRequests(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "newest", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult); ok && r.Action == "accept" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", r.Content["name"])}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "Who is there?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}, nil
	})
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var refused atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found: initialize"}}`, msg.ID)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		stateless.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)

	asked := make(chan string, 1)
	m := newManager(t, &mcpbind.ManagerOptions{ServerRequest: func(_ context.Context, server string, req mcp.InputRequest) (mcp.InputResponse, error) {
		p, ok := req.(*mcp.ElicitParams)
		if !ok {
			return nil, fmt.Errorf("unexpected %T", req)
		}
		asked <- server + ": " + p.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
	}}, mcpbind.ServerConfig{Name: "newest", Type: mcpbind.TypeHTTP, URL: web.URL})
	res, err := call(t, tool(t, m, "newest", "greet"), `{}`)
	if err != nil || res.Text != "hello ada" {
		t.Fatalf("greet: %q, %v", res.Text, err)
	}
	if got := <-asked; got != "newest: Who is there?" {
		t.Errorf("the host was asked %q", got)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("initialize was tried %d times, want once before the newest protocol", n)
	}
}
