package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

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

// askRoster's tools are not Parallel: "ask" puts basis's approval
// question to the client first; "plain" says it started.
type askRoster struct{ plainStarted chan struct{} }

func (r *askRoster) Tools() []contract.Descriptor {
	return []contract.Descriptor{
		{Name: "ask", Description: "Asks.", InputSchema: json.RawMessage(`{"type":"object"}`), SideEffect: contract.SideEffectExternal},
		{Name: "plain", Description: "Runs.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
}

func (r *askRoster) Call(ctx context.Context, name string, _ contract.Call) (string, bool) {
	if name == "plain" {
		close(r.plainStarted)
		return "ran", false
	}
	reply, err := mcpserve.Ask(ctx, mcpserve.Question{Tool: name, SideEffect: contract.SideEffectExternal})
	if err != nil || reply.Choice == mcpserve.ChoiceDeny {
		return fmt.Sprintf("not run: %v %s", err, reply.Said), true
	}
	return "asked and ran", false
}

// While basis's approval question waits for the user, nothing of the
// call has run: the client's other calls of tools that are not Parallel
// go on (a user who never answers holds up none of them), and the asking
// call takes its client's slot again before it runs.
func TestApprovalQuestionLetsTheClientsSlotGo(t *testing.T) {
	r := &askRoster{plainStarted: make(chan struct{})}
	srv := mcpserve.NewServer(r, nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()
	defer func() { cancel(); <-served }()
	var cs *mcp.ClientSession
	plainDone := make(chan error, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// The same client calls another serial tool while its
			// first call's question is open; it must run now. (Not
			// in the request's context, which ends with this answer.)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "plain", Arguments: map[string]any{}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%+v", res.Content)
				}
				plainDone <- err
			}()
			// An overall bound only: before, plain waited for this
			// answer, and this answer for plain.
			select {
			case <-r.plainStarted:
			case <-time.After(30 * time.Second):
				t.Error("the client's second call did not run while its first waited for the user's answer")
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": string(mcpserve.ChoiceAllowOnce)}}, nil
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %+v", err, res)
	}
	if err := <-plainDone; err != nil {
		t.Errorf("plain: %v", err)
	}
}
