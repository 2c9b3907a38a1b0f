package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/basis-go/basis/contract"
)

// upper is a tiny host tool: it upper-cases a string and touches nothing.
type upper struct{}

func (upper) Descriptor() contract.Descriptor {
	return contract.Descriptor{
		Name:        "upper",
		Description: "Upper-case a string.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		SideEffect:  contract.SideEffectNone,
		Parallel:    true,
		Binding:     contract.BindingHost,
		Source:      "example",
	}
}

func (upper) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	subject, err := contract.CanonicalJSON(map[string]any{"tool": "upper", "input": call.Input})
	if err != nil {
		return contract.Preview{}, fmt.Errorf("upper: the input is not JSON: %w", err)
	}
	return contract.Preview{SideEffect: contract.SideEffectNone, Subject: subject, Summary: "upper-case a string"}, nil
}

func (upper) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return contract.Result{}, fmt.Errorf("upper: the input must be an object with a string \"text\": %w", err)
	}
	contract.Progress(ctx, "upper-casing")
	return contract.Result{Text: strings.ToUpper(in.Text)}, nil
}

func Example() {
	var tool contract.ExecutableTool = upper{}
	ctx := contract.WithProgress(context.Background(), func(line string) { fmt.Println("progress:", line) })
	call := contract.Call{ID: "call_1", Input: json.RawMessage(`{"text":"hello"}`)}

	preview, _ := tool.AuthorizationPreview(ctx, call)
	fmt.Printf("%s: %s %s\n", preview.SideEffect, preview.Summary, preview.Subject)

	result, err := tool.Execute(ctx, call)
	fmt.Println(result.Text, err)
	// Output:
	// none: upper-case a string {"input":{"text":"hello"},"tool":"upper"}
	// progress: upper-casing
	// HELLO <nil>
}
