//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// recorder is an Observer that writes down what it is told, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

type depthKey struct{}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) StartCall(ctx context.Context, cs runtime.CallStart) (context.Context, func(*runtime.Outcome)) {
	r.add("call %s id=%s source=%s mcp=%v input=%s", cs.Tool, cs.CallID, cs.Source, cs.MCP, cs.Input)
	return context.WithValue(ctx, depthKey{}, "call"), func(out *runtime.Outcome) {
		r.add("end %s %s %s", out.Tool, out.Status, out.Stage)
	}
}

func (r *recorder) StartPhase(ctx context.Context, p runtime.Phase) (context.Context, func(runtime.PhaseEnd)) {
	r.add("%s in %v", p, ctx.Value(depthKey{}))
	return context.WithValue(ctx, depthKey{}, string(p)), func(end runtime.PhaseEnd) {
		s := fmt.Sprintf("%s done err=%v", p, end.Err != nil)
		if end.Preview != nil {
			s += " preview=" + end.Preview.SideEffect.String()
		}
		if end.Verdict != nil {
			s += fmt.Sprintf(" allow=%v", end.Verdict.Allow)
		}
		r.add("%s", s)
	}
}

// The observer hears each call and each phase it reached, in order, each
// phase's context inside the call's, and the execute phase's context is
// the one the tool runs in.
func TestObserver(t *testing.T) {
	allowed := newHostTool("allowed", contract.SideEffectLocalState)
	allowed.execute = func(ctx context.Context, _ contract.Call) (contract.Result, error) {
		return contract.Result{Text: fmt.Sprint(ctx.Value(depthKey{}))}, nil
	}
	denied := newHostTool("denied", contract.SideEffectLocalState)
	refusing := newHostTool("refusing", contract.SideEffectLocalState)
	refusing.preview = func(context.Context, contract.Call) (contract.Preview, error) {
		return contract.Preview{}, errors.New("no")
	}
	failing := newHostTool("failing", contract.SideEffectLocalState)
	failing.execute = func(context.Context, contract.Call) (contract.Result, error) {
		return contract.Result{}, errors.New("broke")
	}
	gate := newGate(t, approver.DenyAll(), approver.Rule{Tool: "allowed", Decision: approver.RuleAllow, Source: approver.AnySource},
		approver.Rule{Tool: "failing", Decision: approver.RuleAllow, Source: approver.AnySource})

	tests := []struct {
		tool, input string
		want        []string
	}{
		{"allowed", `{"text":"x"}`, []string{
			`call allowed id=c1 source=host mcp=false input={"text":"x"}`,
			"preview in call", "preview done err=false preview=local_state",
			"gate in call", "gate done err=false allow=true",
			"execute in call", "execute done err=false",
			"end allowed ok ",
		}},
		{"denied", `{"text":"x"}`, []string{
			`call denied id=c1 source=host mcp=false input={"text":"x"}`,
			"preview in call", "preview done err=false preview=local_state",
			"gate in call", "gate done err=false allow=false",
			"end denied refused denied",
		}},
		{"refusing", `{"text":"x"}`, []string{
			`call refusing id=c1 source=host mcp=false input={"text":"x"}`,
			"preview in call", "preview done err=true",
			"end refusing refused preview",
		}},
		{"failing", `{"text":"x"}`, []string{
			`call failing id=c1 source=host mcp=false input={"text":"x"}`,
			"preview in call", "preview done err=false preview=local_state",
			"gate in call", "gate done err=false allow=true",
			"execute in call", "execute done err=true",
			"end failing tool_error ",
		}},
		{"allowed", `{"text":1}`, []string{`call allowed id=c1 source=host mcp=false input={"text":1}`, "end allowed refused invalid"}},
		{"nosuch", `{}`, []string{`call nosuch id=c1 source= mcp=false input={}`, "end nosuch refused unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.input, func(t *testing.T) {
			rec := &recorder{}
			rt := build(t, &runtime.Options{Gate: gate, Observer: rec}, allowed, denied, refusing, failing)
			out := rt.Call(t.Context(), tt.tool, contract.Call{ID: "c1", Input: json.RawMessage(tt.input)})
			if diff := cmp.Diff(tt.want, rec.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tt.tool == "allowed" && out.Status == runtime.StatusOK && out.Text != "execute" {
				t.Errorf("the tool ran in context %q, want the execute phase's", out.Text)
			}
		})
	}
}
