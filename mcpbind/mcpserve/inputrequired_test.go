//lint:file-ignore SA1019 sampling and roots are deprecated from protocol 2026-07-28, but servers may ask for them during the deprecation window, and a gateway passes them through (issue 22)

package mcpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// passClient is a client on protocol 2026-07-28 that answers input
// requests itself (the SDK's multi-round handling off), declaring
// elicitation and sampling.
func passClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("unused")
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("unused")
		},
	}
}

func keysOf(m mcp.InputRequestMap) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func accept(v string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": v}}
}

// A server's input requests reach a 2026-07-28 client under the server's
// keys and methods, round after round, with a requestState of basis's
// that changes every round; the server gets the answers and its own
// states back, and the call ends with its result.
func TestServerInputRequestsPassThrough(t *testing.T) {
	g := newGateway(t, nil, allowAll, passClient(), "s")
	ctx := context.Background()
	call := func(resp mcp.InputResponseMap, state string) *mcp.CallToolResult {
		t.Helper()
		res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{},
			InputResponses: resp, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1 := call(nil, "")
	if diff := cmp.Diff([]string{"step1"}, keysOf(r1.InputRequests)); diff != "" {
		t.Fatalf("round 1 keys (-want +got):\n%s", diff)
	}
	p, ok := r1.InputRequests["step1"].(*mcp.ElicitParams)
	if !ok {
		t.Fatalf("step1 is a %T, want an elicitation", r1.InputRequests["step1"])
	}
	if !strings.HasPrefix(p.Message, `MCP server "s" asks`) || !strings.Contains(p.Message, "│ step 1") {
		t.Errorf("the form does not name its server: %q", p.Message)
	}
	if r1.RequestState == "" || strings.Contains(r1.RequestState, "r1") {
		t.Errorf("round 1 state %q: want basis's own, not the server's", r1.RequestState)
	}
	r2 := call(mcp.InputResponseMap{"step1": accept("ada")}, r1.RequestState)
	if diff := cmp.Diff([]string{"step2"}, keysOf(r2.InputRequests)); diff != "" {
		t.Fatalf("round 2 keys (-want +got):\n%s (result %+v)", diff, r2)
	}
	if r2.RequestState == r1.RequestState || strings.Contains(r2.RequestState, "r2") {
		t.Errorf("round 2 state %q: want a new one of basis's", r2.RequestState)
	}
	r3 := call(mcp.InputResponseMap{"step2": accept("blue")}, r2.RequestState)
	if r3.InputRequests != nil || r3.IsError || textOf(t, r3) != "rounds ada blue after 3 requests" {
		t.Errorf("round 3: %+v", r3)
	}
	// Every round is on record, between the call's start and end.
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(g.audit.String()), "\n") {
		var rec struct {
			Event string
			Input *struct {
				Asker string
				Keys  []string
			}
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		e := rec.Event
		if rec.Input != nil {
			e += " " + rec.Input.Asker + " " + strings.Join(rec.Input.Keys, ",")
		}
		events = append(events, e)
	}
	if diff := cmp.Diff([]string{"start", "input s step1", "input s step2", "end"}, events); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	// A round answered is over: its state is refused.
	if _, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"step2": accept("blue")}, RequestState: r2.RequestState}); !invalidParams(err) {
		t.Errorf("a used state: err %v, want -32602", err)
	}
}

func invalidParams(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams
}

// A retry whose state was altered, or that comes from another client,
// for another tool or with other arguments, is refused with -32602 and
// nothing of it reaches the server: the call then goes on as if it had
// not been made, and the server counts only its own rounds.
func TestServerInputStateRefused(t *testing.T) {
	g := newGateway(t, nil, allowAll, passClient(), "s")
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(sctx, st) }()
	other, err := mcp.NewClient(&mcp.Implementation{Name: "other", Version: "v0"}, passClient()).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(); cancel(); <-served })

	r1, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}})
	if err != nil || r1.RequestState == "" {
		t.Fatalf("round 1: %+v, %v", r1, err)
	}
	answer := mcp.InputResponseMap{"step1": accept("ada")}
	for _, tc := range []struct {
		name   string
		cs     *mcp.ClientSession
		params *mcp.CallToolParams
	}{
		{"tampered", g.cs, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}, RequestState: r1.RequestState + "-TAMPERED"}},
		{"made up", g.cs, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}, RequestState: "AAAA.BBBB"}},
		{"other tool", g.cs, &mcp.CallToolParams{Name: "mcp__s__caps", Arguments: map[string]any{}, RequestState: r1.RequestState}},
		{"other arguments", g.cs, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{"x": 1}, RequestState: r1.RequestState}},
		{"other client", other, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}, RequestState: r1.RequestState}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.InputResponses = answer
			res, err := tc.cs.CallTool(ctx, tc.params)
			if !invalidParams(err) {
				t.Errorf("got %+v, %v; want a -32602 error", res, err)
			}
		})
	}
	r2, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}, InputResponses: answer, RequestState: r1.RequestState})
	if err != nil || r2.RequestState == "" {
		t.Fatalf("round 2 after the refusals: %+v, %v", r2, err)
	}
	r3, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"step2": accept("blue")}, RequestState: r2.RequestState})
	if err != nil || textOf(t, r3) != "rounds ada blue after 3 requests" {
		t.Errorf("round 3: %+v, %v (want the server to have had exactly its 3 requests)", r3, err)
	}
}

// A server that asks under basis's own key, or any key beginning with
// "basis", is refused with an error naming it; the client is asked
// nothing.
func TestServerInputReservedKeyRefused(t *testing.T) {
	g := newGateway(t, nil, allowAll, passClient(), "evil")
	for _, key := range []string{"basis_approval", "BASIS_approval", "basis/x", "basisx"} {
		t.Run(key, func(t *testing.T) {
			res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__evil__askas", Arguments: map[string]any{"key": key}})
			if err != nil {
				t.Fatal(err)
			}
			if res.InputRequests != nil || !res.IsError {
				t.Fatalf("got %+v, want a tool error and no question", res)
			}
			if text := textOf(t, res); !strings.Contains(text, `MCP server "evil"`) || !strings.Contains(text, "keeps for its own questions") {
				t.Errorf("the refusal does not say who and why: %q", text)
			}
		})
	}
	res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__evil__askas", Arguments: map[string]any{"key": "approval"}})
	if err != nil || keysOf(res.InputRequests)[0] != "approval" {
		t.Errorf("a key of the server's own: %+v, %v", res, err)
	}
}

// The server is told the client's capabilities, so it asks only what the
// client can answer.
func TestServerInputRespectsClientCapabilities(t *testing.T) {
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("unused") }
	sample := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("unused")
	}
	off := &mcp.MultiRoundTripOptions{Disabled: true}
	for _, tc := range []struct {
		name string
		opts *mcp.ClientOptions
		want []string
	}{
		{"sampling only", &mcp.ClientOptions{MultiRoundTrip: off, CreateMessageHandler: sample, Capabilities: &mcp.ClientCapabilities{}}, []string{"s"}},
		{"elicitation only", &mcp.ClientOptions{MultiRoundTrip: off, ElicitationHandler: elicit, Capabilities: &mcp.ClientCapabilities{}}, []string{"e"}},
		{"both and roots", &mcp.ClientOptions{MultiRoundTrip: off, ElicitationHandler: elicit, CreateMessageHandler: sample}, []string{"e", "r", "s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, nil, allowAll, tc.opts, "s")
			res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__caps", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keysOf(res.InputRequests)); diff != "" {
				t.Errorf("asked (-want +got):\n%s\nresult %+v", diff, res)
			}
		})
	}
}

// basis's own approval comes first, under its key; the server's
// questions follow under theirs, and the approved call is not asked
// about again.
func TestApprovalBeforeServerInput(t *testing.T) {
	g := newGateway(t, nil, mcpserve.ElicitApprover(nil), passClient(), "s")
	ctx := context.Background()
	call := func(resp mcp.InputResponseMap, state string) *mcp.CallToolResult {
		t.Helper()
		res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}, InputResponses: resp, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r := call(nil, "")
	if diff := cmp.Diff([]string{"basis_approval"}, keysOf(r.InputRequests)); diff != "" {
		t.Fatalf("first question (-want +got):\n%s", diff)
	}
	r = call(mcp.InputResponseMap{"basis_approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}}, r.RequestState)
	if diff := cmp.Diff([]string{"step1"}, keysOf(r.InputRequests)); diff != "" {
		t.Fatalf("after the approval (-want +got):\n%s\n%+v", diff, r)
	}
	r = call(mcp.InputResponseMap{"step1": accept("ada")}, r.RequestState)
	if diff := cmp.Diff([]string{"step2"}, keysOf(r.InputRequests)); diff != "" {
		t.Fatalf("round 2 (-want +got):\n%s", diff)
	}
	r = call(mcp.InputResponseMap{"step2": accept("blue")}, r.RequestState)
	if r.IsError || textOf(t, r) != "rounds ada blue after 3 requests" {
		t.Errorf("end: %+v", r)
	}
	if n := strings.Count(g.audit.String(), `"approved_by"`); n > 1 {
		t.Errorf("the audit shows %d approvals of one call", n)
	}
}

// A client on 2025-11-25 still gets the server's question as an
// elicitation/create request of basis's, named.
func TestServerInputToOlderClient(t *testing.T) {
	var asked []string
	copts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return accept("ada"), nil
	}}
	g := newGatewayOn(t, "2025-11-25", nil, allowAll, copts, "s")
	res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__ask", Arguments: map[string]any{"message": "name?"}})
	if err != nil || res.IsError || !strings.Contains(textOf(t, res), `"v":"ada"`) {
		t.Fatalf("ask: %+v, %v", res, err)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `MCP server "s" asks`) {
		t.Errorf("the client was asked %q", asked)
	}
}

var _ approver.Approver = mcpserve.ElicitApprover(nil)

// prompts/get passes the server's input requests through too: each round
// is a get of its own, gated and audited; the server's state waits in
// basis under a state of basis's that is good once, for this client and
// prompt.
func TestPromptInputPassThrough(t *testing.T) {
	g := newGateway(t, nil, allowAll, passClient(), "s")
	ctx := context.Background()
	r1, err := g.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__s__askprompt"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"topic"}, keysOf(r1.InputRequests)); diff != "" {
		t.Fatalf("keys (-want +got):\n%s", diff)
	}
	if r1.RequestState == "" || r1.RequestState == "p" {
		t.Errorf("state %q: want basis's own", r1.RequestState)
	}
	answer := mcp.InputResponseMap{"topic": accept("tides")}
	for _, tc := range []struct {
		name   string
		params *mcp.GetPromptParams
	}{
		{"tampered", &mcp.GetPromptParams{Name: "mcp__s__askprompt", RequestState: r1.RequestState + "x"}},
		{"other prompt", &mcp.GetPromptParams{Name: "mcp__s__summarize", Arguments: map[string]string{"topic": "x"}, RequestState: r1.RequestState}},
		{"other arguments", &mcp.GetPromptParams{Name: "mcp__s__askprompt", Arguments: map[string]string{"a": "b"}, RequestState: r1.RequestState}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.InputResponses = answer
			if res, err := g.cs.GetPrompt(ctx, tc.params); !invalidParams(err) {
				t.Errorf("got %+v, %v; want -32602", res, err)
			}
		})
	}
	r2, err := g.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__s__askprompt", InputResponses: answer, RequestState: r1.RequestState})
	if err != nil || r2.InputRequests != nil || len(r2.Messages) != 1 || r2.Messages[0].Content.(*mcp.TextContent).Text != "about tides" {
		t.Fatalf("round 2: %+v, %v", r2, err)
	}
	if _, err := g.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__s__askprompt", InputResponses: answer, RequestState: r1.RequestState}); !invalidParams(err) {
		t.Errorf("a used state: %v, want -32602", err)
	}
	audit := g.audit.String()
	if starts, inputs := strings.Count(audit, `"event":"start"`), strings.Count(audit, `"event":"input"`); starts != 2 || inputs != 1 {
		t.Errorf("the audit has %d starts and %d input records; want a get per round and the round asked:\n%s", starts, inputs, audit)
	}
}

// A call waiting for its client's answers to a server's question holds
// up none of that client's other calls: the server's round is over, so
// nothing of the call runs meanwhile. (A client may abandon a round.)
func TestAbandonedRoundHoldsNothingUp(t *testing.T) {
	g := newGateway(t, nil, allowAll, passClient(), "s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // an overall bound only
	defer cancel()
	r1, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__rounds", Arguments: map[string]any{}})
	if err != nil || r1.InputRequests == nil {
		t.Fatalf("round 1: %+v, %v", r1, err)
	}
	// Another call of a tool that is not Parallel, while round 1 waits.
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s__askas", Arguments: map[string]any{"key": "k"}})
	if err != nil || keysOf(res.InputRequests)[0] != "k" {
		t.Fatalf("a second call while the first waits: %+v, %v", res, err)
	}
}

// A server that refuses a call because the client lacks a capability
// (-32021) is seen refusing it by the client, with the capabilities it
// names; a client that has it gets the call run.
func TestMissingCapabilityReachesTheClient(t *testing.T) {
	elicitOnly := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}, Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("unused") }}
	g := newGateway(t, nil, allowAll, elicitOnly, "s")
	_, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__needsampling", Arguments: map[string]any{}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(wire.Data), `"sampling"`) {
		t.Fatalf("got %v; want JSON-RPC error -32021 naming sampling", err)
	}
	g = newGateway(t, nil, allowAll, passClient(), "s")
	res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__needsampling", Arguments: map[string]any{}})
	if err != nil || textOf(t, res) != "sampling declared" {
		t.Errorf("a client with sampling: %+v, %v", res, err)
	}
}
