package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// clock is a host's own tool: it reads nothing outside the process, so its
// preview says SideEffectNone and no approver is asked.
type clock struct{}

func (clock) Descriptor() contract.Descriptor {
	return contract.Descriptor{
		Name:        "greeting",
		Description: "Greet somebody by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Binding:     contract.BindingHost,
	}
}

func (clock) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	subject, err := contract.CanonicalJSON(map[string]any{"tool": "greeting", "input": call.Input})
	return contract.Preview{SideEffect: contract.SideEffectNone, Subject: subject, Summary: "greet"}, err
}

func (clock) Execute(_ context.Context, call contract.Call) (contract.Result, error) {
	var in struct{ Name string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return contract.Result{}, err
	}
	return contract.Result{Text: "hello, " + in.Name}, nil
}

func Example() {
	// A workspace that declares one tool: tr, upper-casing its stdin.
	root, _ := os.MkdirTemp("", "basis-example")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
	  "schema": 1,
	  "tools": {
	    "shout": {
	      "description": "Upper-case the input object.",
	      "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	      "command": ["tr", "a-z", "A-Z"]
	    }
	  }
	}`), 0o644)

	manifestTools, err := declared.Load(&declared.Config{Root: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	b := runtime.NewBuilder()
	for _, t := range manifestTools {
		if err := b.Add(t); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := b.Add(clock{}); err != nil {
		fmt.Println(err)
		return
	}
	// The operator allows shout; anything else consequential is denied.
	gate, _ := approver.NewGate(approver.DenyAll, &approver.GateOptions{
		Rules: []approver.Rule{{Tool: "shout", Allow: true}},
	})
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	for _, c := range []runtime.BatchCall{
		{Name: "shout", Call: contract.Call{ID: "1", Input: json.RawMessage(`{"text":"ship it"}`)}},
		{Name: "greeting", Call: contract.Call{ID: "2", Input: json.RawMessage(`{"name":"Ada"}`)}},
		{Name: "shout", Call: contract.Call{ID: "3", Input: json.RawMessage(`{"text":42}`)}},
	} {
		out := rt.Call(ctx, c.Name, c.Call)
		fmt.Printf("%s %s: %s\n", c.Name, out.Status, strings.TrimSpace(out.Text))
	}
	// Output:
	// shout ok: {"TEXT":"SHIP IT"}
	// greeting ok: hello, Ada
	// shout refused: the input for shout does not match its schema: /text: expected string, but got number
}
