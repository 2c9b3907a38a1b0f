package mcpserve_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// depthTool answers with the delegation depth its call runs at.
type depthTool struct{ name string }

func (d depthTool) Descriptor() contract.Descriptor {
	return contract.Descriptor{Name: d.name, Description: "Says its depth.", Binding: "test", Source: "test",
		SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (d depthTool) AuthorizationPreview(context.Context, contract.Call) (contract.Preview, error) {
	return contract.Preview{SideEffect: contract.SideEffectNone, Summary: "say the depth", Subject: json.RawMessage(`{}`)}, nil
}

func (d depthTool) Execute(ctx context.Context, _ contract.Call) (contract.Result, error) {
	return contract.Result{Text: "depth " + strconv.Itoa(contract.DelegationDepth(ctx))}, nil
}

func buildRuntime(t *testing.T, names ...string) *runtime.Runtime {
	t.Helper()
	b := runtime.NewBuilder()
	for _, n := range names {
		if err := b.Add(depthTool{n}); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// A runtime served: calls go through its pipeline at the roster's depth,
// a refusal is an error result, and a runtime stored in its place is
// served after a Refresh.
func TestRuntimeRoster(t *testing.T) {
	r := mcpserve.NewRuntimeRoster(buildRuntime(t, "first"))
	r.Depth = 2
	srv := mcpserve.NewServer(r, nil)
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
	call := func(name string) (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if text, isErr := call("first"); text != "depth 2" || isErr {
		t.Errorf("first: %q, error %v; want depth 2", text, isErr)
	}
	if _, isErr := call("second"); !isErr {
		t.Error("an unknown tool is no error result")
	}
	r.Store(buildRuntime(t, "first", "second"))
	srv.Refresh()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"first", "second"}, names); diff != "" {
		t.Errorf("tools after Store (-want +got):\n%s", diff)
	}
	if text, isErr := call("second"); text != "depth 2" || isErr {
		t.Errorf("second: %q, error %v", text, isErr)
	}
}

// processTool is a depthTool whose calls are consequential, so the gate
// judges them.
type processTool struct{ depthTool }

func (p processTool) Descriptor() contract.Descriptor {
	d := p.depthTool.Descriptor()
	d.SideEffect = contract.SideEffectProcess
	return d
}

func (p processTool) AuthorizationPreview(ctx context.Context, c contract.Call) (contract.Preview, error) {
	pv, err := p.depthTool.AuthorizationPreview(ctx, c)
	pv.SideEffect = contract.SideEffectProcess
	return pv, err
}

// The server's log tells a call basis refused from a tool's error.
func TestServeLogsARefusalAsRefused(t *testing.T) {
	b := runtime.NewBuilder()
	for _, n := range []string{"kept", "denied"} {
		if err := b.Add(processTool{depthTool{n}}); err != nil {
			t.Fatal(err)
		}
	}
	gate, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Rules: []approver.Rule{{Tool: "denied", Decision: approver.RuleDeny, Reason: "not here"}}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	srv := mcpserve.NewServer(mcpserve.NewRuntimeRoster(rt), &mcpserve.ServerOptions{Logger: mcpserve.LineLogger(log, "")})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for _, name := range []string{"kept", "denied"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	cs.Close()
	cancel()
	<-served // every call's line is written once Serve has returned
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		got = append(got, l[:strings.LastIndex(l, " in ")])
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"call 1 kept: ok", "call 2 denied: refused"}, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}
