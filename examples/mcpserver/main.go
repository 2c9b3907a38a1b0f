//go:build unix

// Command mcpserver is a small MCP server over stdio for the example
// workspace's .mcp.json: a stock room with two tools. stock_level reads
// the workspace's data/inventory.json and says so with readOnlyHint, so an
// operator who trusts this server's annotations lets it run unasked;
// reserve_stock holds stock for a caller and needs an approval. Run it
// with its working directory at the workspace root, or name the inventory
// with -inventory.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	inventory := flag.String("inventory", "data/inventory.json", "the inventory file")
	flag.Parse()
	if err := newServer(*inventory).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
