//go:build unix

package mcpserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRoster serves one tool, either answering in memory or running
// /bin/cat on the input, as a declared tool would.
type benchRoster struct{ cat bool }

func (r benchRoster) Tools() []contract.Descriptor {
	return []contract.Descriptor{{Name: "cat", Description: "Echoes its input.", Parallel: true, InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (r benchRoster) Call(ctx context.Context, _ string, call contract.Call) (string, bool) {
	if !r.cat {
		return string(call.Input), false
	}
	cmd := exec.CommandContext(ctx, "/bin/cat")
	cmd.Stdin = bytes.NewReader(call.Input)
	out, err := cmd.Output()
	if err != nil {
		return err.Error(), true
	}
	return string(out), false
}

// BenchmarkServeCall measures a tools/call round trip through the server
// (go-sdk client → in-memory transport → Server → Roster) against calling
// the roster directly, and against a bare SDK server whose handler calls
// the roster (what the protocol alone costs), in the same run, and reports
// the ratios.
func BenchmarkServeCall(b *testing.B) {
	for _, tc := range []struct {
		name string
		cat  bool
	}{{"in-memory-tool", false}, {"bin-cat", true}} {
		b.Run(tc.name, func(b *testing.B) {
			roster := benchRoster{cat: tc.cat}
			server := mcpserve.NewServer(roster, nil)
			ct, st := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go server.Serve(ctx, st)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()

			bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "v0"}, nil)
			bare.AddTool(&mcp.Tool{Name: "cat", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text, isErr := roster.Call(ctx, req.Params.Name, contract.Call{Input: req.Params.Arguments})
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}, nil
			})
			bct, bst := mcp.NewInMemoryTransports()
			if _, err := bare.Connect(ctx, bst, nil); err != nil {
				b.Fatal(err)
			}
			bcs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, bct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bcs.Close()

			input := json.RawMessage(`{"text":"hello"}`)
			call := contract.Call{ID: "bench", Input: input}
			params := &mcp.CallToolParams{Name: "cat", Arguments: input}

			// The three are interleaved, so a busy machine slows them alike.
			var direct, viaSDK, served time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, isErr := roster.Call(ctx, "cat", call); isErr {
					b.Fatal("direct call failed")
				}
				t1 := time.Now()
				if res, err := bcs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatalf("bare SDK call: %v %v", err, res)
				}
				t2 := time.Now()
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatalf("served call: %v %v", err, res)
				}
				direct += t1.Sub(t0)
				viaSDK += t2.Sub(t1)
				served += time.Since(t2)
			}
			b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N), "direct-ns/op")
			b.ReportMetric(float64(viaSDK.Nanoseconds())/float64(b.N), "bare-sdk-ns/op")
			b.ReportMetric(float64(served.Nanoseconds())/float64(b.N), "served-ns/op")
			b.ReportMetric(float64(served)/float64(direct), "served/direct")
			b.ReportMetric(float64(served)/float64(viaSDK), "served/bare-sdk")
		})
	}
}

// BenchmarkServeHTTPConcurrentClients runs 16 HTTP clients, each its own
// session, calling a Parallel tool that runs /bin/cat, and reports the
// latency percentiles of a call. Every call must succeed.
func BenchmarkServeHTTPConcurrentClients(b *testing.B) {
	const clients = 16
	server := mcpserve.NewServer(benchRoster{cat: true}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- server.ListenAndServe(ctx, mcpserve.HTTPOptions{Addr: "127.0.0.1:0", Token: testToken, Listening: func(a net.Addr) { addr <- a }})
	}()
	endpoint := "http://" + (<-addr).String() + "/mcp"
	defer func() {
		cancel()
		<-served
	}()
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{testToken}}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: "cat", Arguments: json.RawMessage(`{"text":"hello"}`)}
	var mu sync.Mutex
	var latencies []time.Duration
	var failures atomic.Int64
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, params)
				mine = append(mine, time.Since(t0))
				if err != nil || res.IsError {
					failures.Add(1)
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d of %d calls failed", n, b.N)
	}
	slices.Sort(latencies)
	at := func(p float64) float64 { return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
