package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// greeter is a one-tool roster; a real host adapts its runtime.
type greeter struct{}

func (greeter) Tools() []contract.Descriptor {
	return []contract.Descriptor{{
		Name:        "greet",
		Description: "Greets someone.",
		SideEffect:  contract.SideEffectNone,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}}
}

func (greeter) Call(_ context.Context, _ string, call contract.Call) (string, bool) {
	var in struct{ Name string }
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Name == "" {
		return "invalid input: /name: missing property", true
	}
	return "hello, " + in.Name, false
}

// ExampleNewServer serves a roster to an MCP client over an in-memory
// transport; `basis serve` does the same over stdio or HTTP.
func ExampleNewServer() {
	server := mcpserve.NewServer(greeter{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	go server.Serve(ctx, serverEnd)

	session, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	tools, _ := session.ListTools(ctx, nil)
	for _, tool := range tools.Tools {
		fmt.Printf("%s (read only: %v)\n", tool.Name, tool.Annotations.ReadOnlyHint)
	}
	for _, args := range []map[string]any{{"name": "Ada"}, {}} {
		res, _ := session.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: args})
		fmt.Printf("isError=%v %s\n", res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// greet (read only: true)
	// isError=false hello, Ada
	// isError=true invalid input: /name: missing property
}
