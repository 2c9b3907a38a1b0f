//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// FuzzCallInput sends any bytes as a call's input. The runtime must never
// panic, and a call that runs must show the preview and give Execute the
// same text: the canonical form of the input.
func FuzzCallInput(f *testing.F) {
	for _, seed := range []string{
		`{"text":"x"}`, `{"text":"a","text":"b"}`, `{"text":"a","TEXT":"b"}`, `{"text":"\u0026\u003c"}`,
		`{"text":"x","n":[[[[]]]]}`, `[]`, `"x"`, ``, `{`, `{"text":"x"}{}`, strings.Repeat("[", 100),
		`{"text":"k","n":{"K":1,"\u212a":2}}`,
	} {
		f.Add([]byte(seed))
	}
	var previewed, executed string
	tool := newHostTool("echo", contract.SideEffectNone)
	tool.desc.InputSchema = json.RawMessage(`{"type":"object"}`)
	tool.preview = func(_ context.Context, call contract.Call) (contract.Preview, error) {
		previewed = string(call.Input)
		return contract.Preview{SideEffect: contract.SideEffectNone, Subject: call.Input}, nil
	}
	tool.execute = func(_ context.Context, call contract.Call) (contract.Result, error) {
		executed = string(call.Input)
		return contract.Result{Text: "ran"}, nil
	}
	rt := build(f, nil, tool)
	f.Fuzz(func(t *testing.T, input []byte) {
		previewed, executed = "", ""
		out := rt.Call(t.Context(), "echo", contract.Call{Input: input})
		canonical, err := contract.CanonicalInput(input)
		switch {
		case err != nil:
			if out.Status != runtime.StatusRefused || out.Stage != runtime.StageInvalid || previewed != "" || executed != "" {
				t.Fatalf("input the contract refuses (%v): %v %v %q, previewed %q", err, out.Status, out.Stage, out.Text, previewed)
			}
		case out.Status != runtime.StatusOK:
			t.Fatalf("canonical input %s: %v %v %q", canonical, out.Status, out.Stage, out.Text)
		case previewed != string(canonical) || executed != string(canonical):
			t.Fatalf("previewed %q, executed %q, canonical %q", previewed, executed, canonical)
		}
	})
}
