//go:build unix

package terminal_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// cargoTest is a spawn subject in canonical form.
const cargoTest = `{"body":"cargo test","commands":[["cargo","test"]],"cwd":"/repo","mode":"command","target":"local"}`

func subject(t testing.TB, literal string) json.RawMessage {
	t.Helper()
	canon, err := contract.CanonicalJSON(json.RawMessage(literal))
	if err != nil || string(canon) != literal {
		t.Fatalf("subject %s is not canonical: %s, %v", literal, canon, err)
	}
	return canon
}

func newGate(t testing.TB, a approver.Approver) *approver.Gate {
	t.Helper()
	g, err := approver.NewGate(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// authorize asks the gate about a spawn-like call of tool with subject subj.
func authorize(t testing.TB, g *approver.Gate, tool, subj string) approver.Verdict {
	t.Helper()
	p := contract.Preview{SideEffect: contract.SideEffectProcess, Subject: subject(t, subj)}
	return g.Authorize(context.Background(), approver.Request{CallID: "call_1", Tool: tool, Source: approver.BuiltinSource, Preview: p, Input: []byte(`{}`)})
}
