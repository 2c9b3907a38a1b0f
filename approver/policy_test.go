//go:build unix

package approver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

func ask(t *testing.T, a approver.Approver, tool string, effect contract.SideEffect) approver.Answer {
	t.Helper()
	answer, err := a.Approve(context.Background(), approver.Request{Tool: tool, Preview: contract.Preview{SideEffect: effect}})
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

func TestAllowAllAndDenyAll(t *testing.T) {
	if a := ask(t, approver.AllowAll(), "deploy", contract.SideEffectExternal); a.Decision != approver.Allow {
		t.Errorf("AllowAll = %+v", a)
	}
	a := ask(t, approver.DenyAll(), "deploy", contract.SideEffectExternal)
	if a.Decision != approver.Deny || !strings.Contains(a.Reason, "tool deploy") {
		t.Errorf("DenyAll = %+v, want a denial naming the tool", a)
	}
}

func TestBySideEffect(t *testing.T) {
	asked := &counter{answer: approver.Answer{Decision: approver.Allow, Reason: "asked"}}
	levels := []contract.SideEffect{contract.SideEffectLocalState}
	policy := approver.BySideEffect(approver.SideEffectPolicy{
		Allow:     levels,
		Deny:      []contract.SideEffect{contract.SideEffectExternal, contract.SideEffectLocalState, contract.SideEffectNone},
		Otherwise: asked,
	})
	levels[0] = contract.SideEffectProcess // the policy keeps its own copy
	tests := []struct {
		effect contract.SideEffect
		want   approver.Decision
		reason string
	}{
		{contract.SideEffectLocalState, approver.Deny, "tool edit denied: calls with side effect local_state are not allowed here"}, // in both lists: denied
		{contract.SideEffectExternal, approver.Deny, "tool edit denied: calls with side effect external are not allowed here"},
		{contract.SideEffectNone, approver.Deny, "tool edit denied: calls with side effect none are not allowed here"},
		{contract.SideEffectProcess, approver.Allow, "asked"},
	}
	for _, tt := range tests {
		a := ask(t, policy, "edit", tt.effect)
		if a.Decision != tt.want || a.Reason != tt.reason {
			t.Errorf("%s: %+v, want %s %q", tt.effect, a, tt.want, tt.reason)
		}
	}
	if asked.asked.Load() != 1 {
		t.Errorf("Otherwise asked %d times, want 1", asked.asked.Load())
	}
	noOtherwise := approver.BySideEffect(approver.SideEffectPolicy{Allow: []contract.SideEffect{contract.SideEffectLocalState}})
	if a := ask(t, noOtherwise, "run", contract.SideEffectProcess); a.Decision != approver.Deny || !strings.Contains(a.Reason, "tool run") {
		t.Errorf("an unlisted level with no Otherwise = %+v, want a denial", a)
	}
}

func TestLocalEditsNoNetwork(t *testing.T) {
	asked := &counter{answer: approver.Answer{Decision: approver.Deny, Reason: "asked"}}
	policy := approver.LocalEditsNoNetwork(asked)
	if a := ask(t, policy, "edit_file", contract.SideEffectLocalState); a.Decision != approver.Allow {
		t.Errorf("local edit = %+v", a)
	}
	if a := ask(t, policy, "mcp__web__fetch", contract.SideEffectExternal); a.Decision != approver.Deny || !strings.Contains(a.Reason, "external") {
		t.Errorf("network = %+v", a)
	}
	if a := ask(t, policy, "spawn", contract.SideEffectProcess); a.Reason != "asked" {
		t.Errorf("a command = %+v, want the question passed on", a)
	}
	if a := ask(t, approver.LocalEditsNoNetwork(nil), "spawn", contract.SideEffectProcess); a.Decision != approver.Deny {
		t.Errorf("a command with nobody to ask = %+v", a)
	}
}
