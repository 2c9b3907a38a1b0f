//go:build unix

package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// A tool's content blocks, structured content and _meta reach the Outcome
// as the tool gave them, for a result and for a failure that came with
// one; the audit records none of them (no base64 blob in the log).
func TestContentPassesThroughTheOutcome(t *testing.T) {
	const blob = "iVBORw0KGgoAAAANSUhEUgAAAAE-BLOB"
	image := json.RawMessage(`{"type":"image","data":"` + blob + `","mimeType":"image/png"}`)
	text := json.RawMessage(`{"type":"text","text":"hello"}`)
	rich := contract.Result{
		Text:       "hello\n[image image/png]",
		Content:    []json.RawMessage{text, image},
		Structured: json.RawMessage(`{"n":1}`),
		Meta:       json.RawMessage(`{"k":"v"}`),
	}
	tests := []struct {
		name    string
		execute func(context.Context, contract.Call) (contract.Result, error)
		status  runtime.Status
		text    string
	}{
		{"result", func(context.Context, contract.Call) (contract.Result, error) { return rich, nil }, runtime.StatusOK, rich.Text},
		{"failure with a result", func(context.Context, contract.Call) (contract.Result, error) {
			return contract.Result{}, &contract.ResultError{Result: rich, Err: errors.New("the tool failed: hello")}
		}, runtime.StatusToolError, "the tool failed: hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newHostTool("rich", contract.SideEffectNone)
			tool.execute = tt.execute
			var audit bytes.Buffer
			rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: &audit}, tool)
			out := rt.Call(t.Context(), "rich", contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
			if out.Status != tt.status || out.Text != tt.text {
				t.Errorf("outcome %v %q, want %v %q", out.Status, out.Text, tt.status, tt.text)
			}
			got := contract.Result{Text: rich.Text, Content: out.Content, Structured: out.Structured, Meta: out.Meta}
			if diff := cmp.Diff(rich, got); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if strings.Contains(audit.String(), blob) || strings.Contains(audit.String(), "hello") {
				t.Errorf("the audit records the result's content:\n%s", audit.String())
			}
		})
	}
}

// A refusal carries no content: nothing ran.
func TestRefusalCarriesNoContent(t *testing.T) {
	tool := newHostTool("rich", contract.SideEffectExternal)
	tool.execute = func(context.Context, contract.Call) (contract.Result, error) {
		return contract.Result{Text: "x", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"x"}`)}}, nil
	}
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Deny})}, tool)
	out := rt.Call(t.Context(), "rich", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Status != runtime.StatusRefused || out.Content != nil || tool.executes.Load() != 0 {
		t.Errorf("denied call: status %v, content %s, executes %d", out.Status, out.Content, tool.executes.Load())
	}
}
