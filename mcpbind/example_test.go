//go:build unix

package mcpbind_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/basis-go/basis/mcpbind/mcphost"
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
	if _, err := mcphost.NewTrustStore(configDir).Trust(ctx, filepath.Join(root, ".mcp.json")); err != nil {
		fmt.Println(err)
		return
	}

	m := mcpbind.Open(ctx, &mcpbind.LoadOptions{
		Root:      root,                             // <root>/.mcp.json
		ConfigDir: configDir,                        // mcp.json
		Trust:     mcphost.NewTrustStore(configDir), // mcp-trust.json
	}, &mcpbind.ManagerOptions{
		Lookup:  os.LookupEnv,             // ${VAR}s read the whole environment
		Env:     os.Environ(),             // stdio servers inherit part of it
		PassEnv: []string{"GITHUB_TOKEN"}, // credential-looking names they inherit all the same
		// Sandbox: a subprocess.Confiner, such as the host's sandbox
		OnToolsChanged: func(source string, tools []contract.ExecutableTool) {
			// replace that source's tools in the roster (runtime.ReplaceMCPSource)
		},
	})
	defer m.Close()
	for _, err := range m.Problems() {
		fmt.Println(err) // each *configfile.Error left its server (or file) out
	}

	// basis call mcp__tickets__echo: start only the server it needs
	if err := m.StartFor(ctx, "mcp__tickets__echo"); err != nil {
		fmt.Println(err) // it could not start, is untrusted, or some tool names collided
	}
	for _, t := range m.Tools() {
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
	// tickets connected, 13 tools
}

func ExampleLoad() {
	root, _ := os.MkdirTemp("", "workspace-")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {
  "db": {"type": "websocket", "url": "ws://localhost:5000"}
}}`), 0o644)
	_, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root})
	fmt.Println(strings.TrimPrefix(err.Error(), root))
	// Output:
	// /.mcp.json:2:18: server db: type: unknown type "websocket"; use stdio, http or sse
}

func ExampleToolName() {
	fmt.Println(mcpbind.ToolName("my.server", "get file"))
	// Output:
	// mcp__my_server__get_file
}
