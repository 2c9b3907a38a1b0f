package mcpserve_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approvingRoster's one tool asks its approver about a fixed request and
// answers with the approver's answer as JSON, as a gate would use it.
type approvingRoster struct {
	appr approver.Approver
	req  approver.Request
}

func (r approvingRoster) Tools() []contract.Descriptor {
	return []contract.Descriptor{{Name: "deploy", Description: "Deploys.", SideEffect: contract.SideEffectExternal, InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (r approvingRoster) Call(ctx context.Context, _ string, _ contract.Call) (string, bool) {
	a, err := r.appr.Approve(ctx, r.req)
	if err != nil {
		return "error: " + err.Error(), true
	}
	out, _ := json.Marshal(a)
	return string(out), false
}

// The elicitation approver turns the client's answer into the gate's:
// once, always (saved, covering the proposed rules when there are some),
// or a denial that says why — and, when the client cannot ask at all,
// how to allow the call for good.
func TestElicitApproverAnswers(t *testing.T) {
	hint := func(req approver.Request) string { return "basis rules add --tool " + req.Tool + " --allow" }
	proposed := []approver.Rule{{Tool: "spawn", Command: approver.Words("go", "test", "*")}}
	tests := []struct {
		name     string
		elicit   *mcp.ElicitResult // nil: the client declares no elicitation
		proposed []approver.Rule
		want     approver.Answer
	}{
		{"allow once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil,
			approver.Answer{Decision: approver.Allow, Reason: "allowed once by the MCP client's user"}},
		{"always", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_always"}}, nil,
			approver.Answer{Decision: approver.AllowSession, Persist: true, Reason: "always allowed by the MCP client's user"}},
		{"always, with proposed rules", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_always"}}, proposed,
			approver.Answer{Decision: approver.AllowSession, Persist: true, Remember: &approver.Remember{Proposed: true}, Reason: "always allowed by the MCP client's user"}},
		{"declined", &mcp.ElicitResult{Action: "decline"}, nil,
			approver.Answer{Decision: approver.Deny, Reason: "tool deploy denied: the user declined the question"}},
		{"a client that cannot ask", nil, nil,
			approver.Answer{Decision: approver.Deny, Reason: "deploy was not run: the MCP client cannot ask its user (it did not declare elicitation support), and no rule allows the call; allow it for good with: basis rules add --tool deploy --allow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := approvingRoster{appr: mcpserve.ElicitApprover(hint), req: approver.Request{Tool: "deploy", Source: "/repo/.basis/tools.json",
				Preview: contract.Preview{SideEffect: contract.SideEffectExternal, Summary: "deploy", Subject: json.RawMessage(`{}`)}, Proposed: tt.proposed}}
			srv := mcpserve.NewServer(r, nil)
			ct, st := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, st) }()
			var copts *mcp.ClientOptions
			if tt.elicit != nil {
				copts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return tt.elicit, nil }}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, copts).Connect(ctx, ct, nil)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); cancel(); <-served })
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy"})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			var got approver.Answer
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// Outside a served call nobody can be asked: a denial with the hint.
func TestElicitApproverOutsideAServedCall(t *testing.T) {
	a, err := mcpserve.ElicitApprover(nil).Approve(context.Background(), approver.Request{Tool: "deploy"})
	if err != nil || a.Decision != approver.Deny {
		t.Errorf("Approve = %+v, %v; want a denial", a, err)
	}
}
