// Command mcprelay is the smallest MCP gateway go-sdk makes: it serves
// streamable HTTP and passes every tools/call on, unchanged, to one MCP
// server it starts over stdio, with no gate, audit, schema check or log.
// BenchmarkGatewayOverDirect alternates calls through it with calls
// through `basis serve --http`, which makes the same two hops: the ratio
// of the two is what basis itself costs, and the relay against the
// server's own HTTP is what any process hop costs.
//
// Usage:
//
//	mcprelay -http 127.0.0.1:8765 [-stateless] PROGRAM [ARG...]
//
// It serves the tools PROGRAM lists when it starts, under their own names.
// It sets the garbage collector's target as basis serve does (GOGC=400
// unless $GOGC is set), so the two differ in their work only.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("http", "", "host:port to serve streamable HTTP on")
	stateless := flag.Bool("stateless", false, "serve stateless streamable HTTP (protocol 2026-07-28) instead of sessions")
	flag.Parse()
	if *addr == "" || flag.NArg() == 0 {
		log.Fatal("usage: mcprelay -http HOST:PORT [-stateless] PROGRAM [ARG...]")
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	ctx := context.Background()
	upstream, err := mcp.NewClient(&mcp.Implementation{Name: "mcprelay", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(flag.Arg(0), flag.Args()[1:]...)}, nil)
	if err != nil {
		log.Fatalf("connecting to %s: %v", flag.Arg(0), err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "mcprelay", Version: "v0"}, nil)
	for tool, err := range upstream.Tools(ctx, nil) {
		if err != nil {
			log.Fatalf("listing the tools of %s: %v", flag.Arg(0), err)
		}
		server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			params := &mcp.CallToolParams{Name: req.Params.Name}
			if len(req.Params.Arguments) > 0 {
				params.Arguments = req.Params.Arguments
			}
			return upstream.CallTool(ctx, params)
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: *stateless})
	log.Fatal(http.ListenAndServe(*addr, h))
}
