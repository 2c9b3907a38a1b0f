// Command catserver is the bare go-sdk stdio MCP server that
// BenchmarkServeStdioOverSDK measures `basis serve` against: one tool,
// "cat", whose call runs /bin/cat with the arguments' JSON on its stdin
// and returns what it printed — the program basis serve's declared cat
// runs, with no schema check, gate, audit or sandbox. It sets the garbage
// collector's target as basis serve does (GOGC=400 unless $GOGC is set).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "catserver", Version: "v0"}, nil)
	server.AddTool(&mcp.Tool{Name: "cat", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.CommandContext(ctx, "/bin/cat")
			cmd.Stdin = bytes.NewReader(req.Params.Arguments)
			out, err := cmd.Output()
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
