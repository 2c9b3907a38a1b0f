//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// helperPath is the program process tools run, built from
// testdata/helper by TestMain.
var helperPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runtime-test-helper")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	helperPath = filepath.Join(dir, "helper")
	build := exec.Command("go", "build", "-o", helperPath, "./testdata/helper")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test helper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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

// processTool stands in for a declared tool: it runs a real program
// through subprocess, the input on its stdin, and reports a failure the
// way the declared binding does, a *subprocess.ExitError in its chain.
type processTool struct {
	desc contract.Descriptor
	// command is the argv as the subject shows it; argv is what runs.
	command, argv []string
	// env is the program's whole environment; its values are never in
	// the subject.
	env      []string
	executes atomic.Int32
}

// newProcessTool runs the helper program with args; the subject shows it
// as "helper".
func newProcessTool(name string, args ...string) *processTool {
	return newProgramTool(name, helperPath, args...)
}

func newProgramTool(name, program string, args ...string) *processTool {
	return &processTool{
		desc: contract.Descriptor{
			Name:        name,
			Description: "a program for tests",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			SideEffect:  contract.SideEffectProcess,
			Binding:     contract.BindingDeclared,
			Source:      "/work/.basis/tools.json",
		},
		command: append([]string{filepath.Base(program)}, args...),
		argv:    append([]string{program}, args...),
	}
}

func (p *processTool) Descriptor() contract.Descriptor { return p.desc }

func (p *processTool) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	subject, err := contract.CanonicalJSON(map[string]any{"tool": p.desc.Name, "command": p.command, "input": call.Input})
	if err != nil {
		return contract.Preview{}, err
	}
	return contract.Preview{SideEffect: contract.SideEffectProcess, Subject: subject, Summary: "run " + strings.Join(p.command, " ")}, nil
}

func (p *processTool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	p.executes.Add(1)
	started := time.Now()
	res, err := subprocess.Run(ctx, &subprocess.Cmd{Argv: p.argv, Env: p.env, Stdin: call.Input, Timeout: p.desc.Timeout})
	if err != nil {
		return contract.Result{}, fmt.Errorf("%s could not start: %w", p.desc.Name, err)
	}
	if res.Outcome.Success() {
		return contract.Result{Text: strings.TrimRight(string(res.Stdout), "\n")}, nil
	}
	return contract.Result{}, &processError{msg: p.failure(ctx, res, started), err: res.Err()}
}

// failure words a failed run as the declared binding does, including its
// tell for a deadline that was not its own.
func (p *processTool) failure(ctx context.Context, res *subprocess.Result, started time.Time) string {
	name := p.desc.Name
	switch o := res.Outcome; o.Kind {
	case subprocess.Exited:
		return fmt.Sprintf("%s exited %d: %s", name, o.Code, strings.TrimSpace(string(res.Stderr)))
	case subprocess.TimedOut:
		if deadline, ok := ctx.Deadline(); ok && (p.desc.Timeout == 0 || deadline.Before(started.Add(p.desc.Timeout))) {
			return name + " did not finish before the call's deadline and was stopped"
		}
		return fmt.Sprintf("%s did not finish within %s and was stopped", name, p.desc.Timeout)
	default:
		return name + " " + o.String()
	}
}

type processError struct {
	msg string
	err error
}

func (e *processError) Error() string { return e.msg }
func (e *processError) Unwrap() error { return e.err }

// countingApprover answers with a fixed decision and counts the questions.
type countingApprover struct {
	decision approver.Decision
	asked    atomic.Int32
}

func (a *countingApprover) Approve(_ context.Context, req approver.Request) (approver.Answer, error) {
	a.asked.Add(1)
	return approver.Answer{Decision: a.decision, Reason: "the test approver said " + string(a.decision)}, nil
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

// panickyError panics when asked for its text, as a careless tool's error
// type might.
type panickyError struct{}

func (*panickyError) Error() string { panic("Error() of a broken error type") }

// gatedTool blocks each Execute until released, to hold calls in flight.
type gatedTool struct {
	*hostTool
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGatedTool(name, source, answer string) *gatedTool {
	g := &gatedTool{hostTool: newHostTool(name, contract.SideEffectNone), started: make(chan struct{}), release: make(chan struct{})}
	g.desc.Source = source
	g.execute = func(ctx context.Context, _ contract.Call) (contract.Result, error) {
		g.once.Do(func() { close(g.started) })
		select {
		case <-g.release:
			return contract.Result{Text: answer}, nil
		case <-ctx.Done():
			return contract.Result{}, errors.New("never released")
		}
	}
	return g
}
