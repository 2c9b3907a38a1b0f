package mcpserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdRoster's one tool, which is not Parallel, runs until release is
// closed and records, as each call begins, how many calls of its client
// were running.
type holdRoster struct {
	release chan struct{}
	started chan string // the call's "who"

	mu      sync.Mutex
	running map[mcpserve.Client]int
	clients map[string]mcpserve.Client // each call's, by "who", when not nil
	overlap []string                   // calls that began while another of their client ran
}

func (r *holdRoster) Tools() []contract.Descriptor {
	return []contract.Descriptor{{Name: "hold", Description: "Holds.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (r *holdRoster) Call(ctx context.Context, _ string, call contract.Call) (string, bool) {
	var in struct{ Who string }
	_ = json.Unmarshal(call.Input, &in)
	c, _ := mcpserve.ClientOf(ctx)
	r.mu.Lock()
	if r.running[c] > 0 {
		r.overlap = append(r.overlap, in.Who)
	}
	r.running[c]++
	if r.clients != nil {
		r.clients[in.Who] = c
	}
	r.mu.Unlock()
	r.started <- in.Who
	<-r.release
	r.mu.Lock()
	r.running[c]--
	r.mu.Unlock()
	return "held", false
}

// A client's calls of a tool that is not Parallel run one at a time, and
// never wait for another client's.
func TestServeRunsAClientsSerialToolsOneAtATime(t *testing.T) {
	r := &holdRoster{release: make(chan struct{}), started: make(chan string, 3), running: map[mcpserve.Client]int{}}
	srv := mcpserve.NewServer(r, nil)
	connect := func() *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, st) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); cancel(); <-served })
		return cs
	}
	a, b := connect(), connect()
	var wg sync.WaitGroup
	call := func(cs *mcp.ClientSession, who string) {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{"who": who}})
			if err != nil || res.IsError {
				t.Errorf("call %s: %v %+v", who, err, res)
			}
		})
	}
	call(a, "a1")
	if got := <-r.started; got != "a1" {
		t.Fatalf("first call to start: %s, want a1", got)
	}
	call(a, "a2")
	call(b, "b1")
	// b1 starts while a1 holds its client's slot: clients do not wait
	// for each other.
	for got := <-r.started; got != "b1"; got = <-r.started {
		if got == "a2" {
			t.Errorf("a2 started while a1 ran")
		}
	}
	close(r.release)
	wg.Wait()
	if len(r.overlap) > 0 {
		t.Errorf("calls that began while another of their client ran: %v", r.overlap)
	}
}

// Without sessions (protocol 2026-07-28 over HTTP) a client is what its
// requests' clientInfo says, whichever connection they come over: the
// server holds its calls of a tool that is not Parallel to one at a time
// by that Client (as TestServeRunsAClientsSerialToolsOneAtATime shows),
// and another client's are apart.
func TestServeSessionlessClientIsItsClientInfo(t *testing.T) {
	r := &holdRoster{release: make(chan struct{}), started: make(chan string, 3), running: map[mcpserve.Client]int{}, clients: map[string]mcpserve.Client{}}
	close(r.release)
	h := &harness{server: mcpserve.NewServer(r, nil)}
	endpoint, _ := startHTTP(t, h)
	call := func(name, who string) {
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{testToken}}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v0"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %s, want the sessionless 2026-07-28", v)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{"who": who}})
		if err != nil || res.IsError {
			t.Errorf("call %s: %v %+v", who, err, res)
		}
	}
	call("agent-a", "a1")
	call("agent-a", "a2")
	call("agent-b", "b1")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients["a1"] != r.clients["a2"] {
		t.Error("two connections of client agent-a are different Clients")
	}
	if r.clients["a1"] == r.clients["b1"] || r.clients["b1"] == (mcpserve.Client{}) {
		t.Error("clients agent-a and agent-b are one Client")
	}
}
