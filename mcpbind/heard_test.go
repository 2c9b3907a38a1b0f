//go:build unix

//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28, but servers log during the deprecation window, and basis passes it on (issue 22)

package mcpbind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every log message and progress step a server sends before its result
// reaches the caller before the call returns: the SDK hands
// notifications to their handler on a queue of their own, and a result
// that overtook them would leave the last lines of a tool's log to
// arrive after the client's request had ended (the conformance suite's
// tools-call-with-logging lost its third line so).
func TestLogsBeforeTheResultArriveBeforeIt(t *testing.T) {
	const lines = 40
	m := newManager(t, nil, mcpbind.ServerConfig{Name: "s", Command: "x"})
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		up := testserver.New(testserver.Options{})
		up.AddTool(&mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := range lines {
					_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: i})
					if tok := req.Params.GetProgressToken(); tok != nil {
						_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: lines})
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
		if _, err := up.Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	chatty := tool(t, m, "s", "chatty")
	for round := range 5 {
		var mu sync.Mutex
		var logs, steps int
		ctx := contract.WithLog(context.Background(), "info", func(contract.LogMessage) {
			mu.Lock()
			logs++
			mu.Unlock()
		})
		ctx = contract.WithProgressSteps(ctx, func(contract.ProgressStep) {
			mu.Lock()
			steps++
			mu.Unlock()
		})
		res, err := chatty.Execute(ctx, contract.Call{ID: fmt.Sprint(round), Input: []byte(`{}`)})
		if err != nil || res.Text != "done" {
			t.Fatalf("call: %q, %v", res.Text, err)
		}
		mu.Lock()
		gotLogs, gotSteps := logs, steps
		mu.Unlock()
		if gotLogs != lines || gotSteps != lines {
			t.Fatalf("round %d: %d log messages and %d progress steps had arrived when the call returned; want %d of each", round, gotLogs, gotSteps, lines)
		}
	}
}
