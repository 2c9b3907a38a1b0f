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

// A workspace's .mcp.json names an HTTP server; the operator trusts the
// file, the Manager starts the server, and its tools are called like any
// other tool.
func Example() {
	srv := testserver.New(testserver.Options{})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer web.Close()

	root, _ := os.MkdirTemp("", "workspace-")
	conf, _ := os.MkdirTemp("", "config-")
	defer os.RemoveAll(root)
	defer os.RemoveAll(conf)
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {
		"tickets": {"type": "http", "url": "`+web.URL+`", "headers": {"Authorization": "Bearer ${TICKETS_TOKEN:-none}"}}
	}}`), 0o644)

	ctx := context.Background()
	if _, err := mcpbind.NewTrustStore(conf).Trust(ctx, filepath.Join(root, ".mcp.json")); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := mcpbind.Load(ctx, mcpbind.LoadOptions{Root: root, ConfigDir: conf})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := mcpbind.NewManager(cfg, mcpbind.Options{})
	defer m.Close()

	server, _ := m.ServerFor("mcp__tickets__echo") // start only what the call needs
	tools, err := m.ServerTools(ctx, server)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools {
		if t.Descriptor().Name != "mcp__tickets__echo" {
			continue
		}
		d := t.Descriptor()
		fmt.Println(d.Name, d.Binding, d.SideEffect)
		res, err := t.Execute(ctx, contract.Call{Input: []byte(`{"id": 42}`)})
		fmt.Println(res.Text, err)
	}
	fmt.Println(m.Status()[0])
	// Output:
	// mcp__tickets__echo mcp external
	// echo {"id":42} <nil>
	// connected, 12 tools
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
