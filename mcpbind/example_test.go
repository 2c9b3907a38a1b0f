//go:build unix

package mcpbind_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A workspace's .mcp.json names an HTTP server, which the operator trusts,
// and the operator's mcp.json a program that is not installed. The Manager
// starts a server when a call first needs it, or every server at once; a
// server that fails takes only its own tools with it.
func Example() {
	srv := testserver.New(testserver.Options{})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer web.Close()

	root, _ := os.MkdirTemp("", "workspace-")
	configDir, _ := os.MkdirTemp("", "config-")
	defer os.RemoveAll(root)
	defer os.RemoveAll(configDir)
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {
		"tickets": {"type": "http", "url": "`+web.URL+`", "headers": {"Authorization": "Bearer ${TICKETS_TOKEN:-none}"}}
	}}`), 0o644)
	os.WriteFile(filepath.Join(configDir, "mcp.json"), []byte(`{"mcpServers": {
		"search": {"command": "/nonexistent/search-server"}
	}}`), 0o644)
	ctx := context.Background()
	if _, err := mcpbind.NewTrustStore(configDir).Trust(ctx, filepath.Join(root, ".mcp.json")); err != nil {
		fmt.Println(err)
		return
	}

	cfg, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{
		Root:      root,      // <root>/.mcp.json
		ConfigDir: configDir, // mcp.json and mcp-trust.json
	})
	if err != nil {
		// every problem, one *configfile.Error per line; cfg still holds
		// every server that is well formed
		fmt.Println(err)
	}
	m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{
		Lookup:  os.LookupEnv,             // ${VAR}s read the whole environment
		Env:     os.Environ(),             // stdio servers inherit part of it (below)
		PassEnv: []string{"GITHUB_TOKEN"}, // credential-looking names they inherit all the same
		OnToolsChanged: func(server string, tools []contract.ExecutableTool) {
			// replace that server's tools in the roster (runtime.ReplaceMCPSource)
		},
	})
	defer m.Close()

	// basis call mcp__tickets__echo: start only the server it needs
	server, _ := m.ServerFor("mcp__tickets__echo")
	tools, err := m.ServerTools(ctx, server)
	if err != nil {
		fmt.Println(err) // it could not start, is untrusted, or some tool names collided
	}
	for _, t := range tools {
		if t.Descriptor().Name == "mcp__tickets__echo" {
			res, err := t.Execute(ctx, contract.Call{Input: []byte(`{"id": 42}`)})
			fmt.Println(res.Text, err)
		}
	}

	// basis tools: start every server and show each one's state
	if err := m.StartAll(ctx); err != nil {
		fmt.Println(err) // each server that failed; the others are connected
	}
	for _, st := range m.Status() {
		fmt.Println(st.Server, st) // "connected, 3 tools", "failed: ...", "untrusted: run basis mcp trust"
	}
	// Output:
	// echo {"id":42} <nil>
	// MCP server "search": start: it could not be started or did not complete the MCP handshake: fork/exec /nonexistent/search-server: no such file or directory
	// search failed: it could not be started or did not complete the MCP handshake: fork/exec /nonexistent/search-server: no such file or directory
	// tickets connected, 12 tools
}

func ExampleParseConfig() {
	_, err := mcpbind.ParseConfig("/repo/.mcp.json", []byte(`{"mcpServers": {
  "db": {"type": "websocket", "url": "ws://localhost:5000"}
}}`), mcpbind.OriginWorkspace)
	fmt.Println(err)
	// Output:
	// /repo/.mcp.json:2:18: server db: type: unknown type "websocket"; use stdio, http or sse
}

func ExampleToolName() {
	fmt.Println(mcpbind.ToolName("my.server", "get file"))
	// Output:
	// mcp__my_server__get_file
}
