//go:build unix

//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 (SEP-2577) but works through its deprecation window, and a gateway passes on what servers log (issue 22)

package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream server's log messages during a call reach basis serve's
// client at the level the client asked for (logging/setLevel on a
// session, the request's _meta without one), named by the server; its
// progress reaches the client under the client's own token, as counted.
func TestServeForwardsLogsAndProgress(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			up := testserver.New(testserver.Options{})
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			up.AddTool(&mcp.Tool{Name: "chatty", Description: "Logs and counts.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					for i, level := range []mcp.LoggingLevel{"debug", "info", "warning"} {
						_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "worker", Data: map[string]any{"n": i}})
					}
					if tok := req.Params.GetProgressToken(); tok != nil {
						for i := 1; i <= 2; i++ {
							_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i * 50), Total: 100, Message: fmt.Sprintf("step %d", i)})
						}
					}
					// The result waits until the client has heard all:
					// a notification overtaken by its result is lost.
					<-release
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				})
			logs := make(chan *mcp.LoggingMessageParams, 8)
			steps := make(chan *mcp.ProgressNotificationParams, 8)
			cs := proxiedVersion(t, up, &mcp.ClientOptions{
				LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { steps <- r.Params },
			}, version)
			t.Cleanup(free) // runs before the servers' cleanups, which wait for the call
			params := &mcp.CallToolParams{Name: "mcp__ts__chatty", Arguments: map[string]any{}}
			params.SetProgressToken("client-token-7")
			if version < "2026-07-28" {
				if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			} else {
				params.Meta[mcp.MetaKeyLogLevel] = "info"
			}
			done := make(chan error, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), params)
				if err == nil && res.IsError {
					err = fmt.Errorf("error result %+v", res)
				}
				done <- err
			}()
			var gotLogs []mcp.LoggingMessageParams
			var gotSteps []mcp.ProgressNotificationParams
			deadline := time.After(30 * time.Second)
			for len(gotLogs) < 2 || len(gotSteps) < 2 {
				select {
				case l := <-logs:
					gotLogs = append(gotLogs, *l)
				case p := <-steps:
					gotSteps = append(gotSteps, *p)
				case <-deadline:
					t.Fatalf("heard %d log messages and %d steps, want 2 and 2", len(gotLogs), len(gotSteps))
				}
			}
			free()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			wantLogs := []mcp.LoggingMessageParams{
				{Level: "info", Logger: "ts/worker", Data: map[string]any{"n": float64(1)}},
				{Level: "warning", Logger: "ts/worker", Data: map[string]any{"n": float64(2)}},
			}
			if diff := cmp.Diff(wantLogs, gotLogs); diff != "" {
				t.Errorf("log messages (-want +got):\n%s", diff)
			}
			wantSteps := []mcp.ProgressNotificationParams{
				{ProgressToken: "client-token-7", Progress: 50, Total: 100, Message: "step 1"},
				{ProgressToken: "client-token-7", Progress: 100, Total: 100, Message: "step 2"},
			}
			if diff := cmp.Diff(wantSteps, gotSteps); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			select {
			case l := <-logs:
				t.Errorf("a log message below the client's level: %+v", l)
			default:
			}
		})
	}
}

// A client that cancels its call cancels the upstream server's call too.
func TestServeCancellationReachesTheUpstreamCall(t *testing.T) {
	up := testserver.New(testserver.Options{})
	started, cancelled := make(chan struct{}), make(chan struct{})
	up.AddTool(&mcp.Tool{Name: "wait", Description: "Waits to be cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cancelled"}}}, nil
		})
	cs := proxiedVersion(t, up, nil, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ts__wait", Arguments: map[string]any{}})
	}()
	<-started
	cancel()
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream call was not cancelled")
	}
	<-done
}
