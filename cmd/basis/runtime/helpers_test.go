package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// hostTool is a host's own tool whose behaviour each test chooses, and
// which counts how often each stage reached it.
type hostTool struct {
	desc     contract.Descriptor
	preview  func(ctx context.Context, call contract.Call) (contract.Preview, error)
	execute  func(ctx context.Context, call contract.Call) (contract.Result, error)
	previews atomic.Int32
	executes atomic.Int32
}

const objectSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`

func newHostTool(name string, effect contract.SideEffect) *hostTool {
	return &hostTool{desc: contract.Descriptor{
		Name:        name,
		Description: "a host tool for tests",
		InputSchema: json.RawMessage(objectSchema),
		SideEffect:  effect,
		Binding:     contract.BindingHost,
		Source:      "host",
	}}
}

func (h *hostTool) Descriptor() contract.Descriptor { return h.desc }

func (h *hostTool) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	h.previews.Add(1)
	if h.preview != nil {
		return h.preview(ctx, call)
	}
	subject, err := contract.CanonicalJSON(map[string]any{"tool": h.desc.Name, "input": call.Input})
	if err != nil {
		return contract.Preview{}, err
	}
	return contract.Preview{SideEffect: h.desc.SideEffect, Subject: subject, Summary: "run " + h.desc.Name}, nil
}

func (h *hostTool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	h.executes.Add(1)
	if h.execute != nil {
		return h.execute(ctx, call)
	}
	return contract.Result{Text: h.desc.Name + " ran"}, nil
}

// countingApprover answers with a fixed decision and counts the questions.
type countingApprover struct {
	decision approver.Decision
	asked    atomic.Int32
}

func (a *countingApprover) Approve(_ context.Context, req approver.Request) (approver.Answer, error) {
	a.asked.Add(1)
	return approver.Answer{Decision: a.decision, Reason: "the test approver said " + a.decision.String()}, nil
}

func newGate(t testing.TB, a approver.Approver, rules ...approver.Rule) *approver.Gate {
	t.Helper()
	g, err := approver.NewGate(a, &approver.GateOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func build(t testing.TB, opts *runtime.Options, tools ...contract.ExecutableTool) *runtime.Runtime {
	t.Helper()
	b := runtime.NewBuilder()
	if err := b.Add(tools...); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// writeManifest writes a tools.json under root/.basis and returns its
// path.
func writeManifest(t testing.TB, root, manifest string) string {
	t.Helper()
	path := filepath.Join(root, declared.WorkspaceFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeScript writes an executable shell script.
func writeScript(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func loadDeclared(t testing.TB, root string, environ ...string) []contract.ExecutableTool {
	t.Helper()
	tools, err := declared.Load(&declared.Config{Root: root, Environ: append([]string{"PATH=" + os.Getenv("PATH")}, environ...)})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]contract.ExecutableTool, len(tools))
	for i, tool := range tools {
		out[i] = tool
	}
	return out
}
