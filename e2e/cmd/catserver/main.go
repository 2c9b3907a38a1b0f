// Command catserver is the bare go-sdk stdio MCP server that
// BenchmarkServeStdioOverSDK measures `basis serve` against: one tool,
// "cat", whose call runs /bin/cat with the arguments' JSON on its stdin
// and returns what it printed — the program basis serve's declared cat
// runs, with no schema check, gate, audit or sandbox. With -sandbox DIR it
// confines /bin/cat as the sandbox module confines a program started in
// the workspace DIR under the default policy (what basis serve's
// sandboxed cat gets), and nothing else of basis: the baseline that leaves
// the sandbox's own cost out of basis's. It sets the garbage collector's
// target as basis serve does (GOGC=400 unless $GOGC is set).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"os/exec"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/basis-go/basis/sandbox"
)

func main() {
	sandbox.Main() // the sandbox's re-execution of this binary, where it needs one
	workspace := flag.String("sandbox", "", "confine /bin/cat as a program started in this workspace")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	run := func(cmd *exec.Cmd) error { return cmd.Run() }
	if *workspace != "" {
		sb, err := sandbox.New(sandbox.Policy{}, *workspace)
		if err != nil {
			log.Fatal(err)
		}
		run = func(cmd *exec.Cmd) error {
			cmd.Dir = *workspace
			start, release, err := sb.Prepare(cmd)
			if err != nil {
				return err
			}
			defer release()
			if err := start(); err != nil {
				return err
			}
			return cmd.Wait()
		}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "catserver", Version: "v0"}, nil)
	server.AddTool(&mcp.Tool{Name: "cat", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.CommandContext(ctx, "/bin/cat")
			cmd.Stdin = bytes.NewReader(req.Params.Arguments)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := run(cmd); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.String()}}}, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
