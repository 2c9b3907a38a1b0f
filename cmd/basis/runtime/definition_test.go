//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// definedTool is a host tool with a definition that a test changes, as a
// repository changes what a declared tool runs.
type definedTool struct {
	*hostTool
	mu    sync.Mutex
	def   json.RawMessage
	err   error
	panic bool
	asked atomic.Int32
}

func (d *definedTool) Definition(context.Context) (json.RawMessage, error) {
	d.asked.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.panic {
		panic("Definition of a broken tool")
	}
	return d.def, d.err
}

func (d *definedTool) set(def string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.def, d.err = json.RawMessage(def), err
}

// TestCallsCarryTheToolsDefinition: the gate is asked with the tool's
// definition as it is at the call, so an allow rule for one definition
// does not run the tool once it has changed, and the denial says what
// changed. A tool that cannot say what it is is refused; a read is not
// asked for its definition.
func TestCallsCarryTheToolsDefinition(t *testing.T) {
	tool := &definedTool{hostTool: newHostTool("fmt", contract.SideEffectProcess)}
	tool.desc.Source = "/repo/.basis/tools.json"
	tool.desc.Binding = contract.BindingDeclared
	tool.set(`{"program":"/repo/fmt.sh"}`, nil)
	rule := approver.Rule{Tool: "fmt", Source: "/repo/.basis/tools.json", Decision: approver.RuleAllow, Definition: json.RawMessage(`{"program":"/repo/fmt.sh"}`)}
	rt := build(t, &runtime.Options{Gate: newGate(t, approver.DenyAll(), rule)}, tool)
	call := contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)}

	if out := rt.Call(context.Background(), "fmt", call); out.Status != runtime.StatusOK || out.Verdict.Source != approver.SourceRule {
		t.Fatalf("the approved definition: %+v", out)
	}
	tool.set(`{"program":"/usr/bin/python3"}`, nil)
	out := rt.Call(context.Background(), "fmt", call)
	if out.Status != runtime.StatusRefused || out.Stage != runtime.StageDenied ||
		!strings.Contains(out.Text, `it has changed since: program was "/repo/fmt.sh", is now "/usr/bin/python3"`) {
		t.Errorf("a changed definition: %s %s: %s", out.Status, out.Stage, out.Text)
	}
	if tool.executes.Load() != 1 {
		t.Errorf("executed %d times, want once", tool.executes.Load())
	}
	ex := rt.Explain(context.Background(), "fmt", call)
	if ex.Rules == nil || len(ex.Rules.Stale) != 1 || string(ex.Request.Definition) != `{"program":"/usr/bin/python3"}` {
		t.Errorf("Explain = %+v", ex)
	}
	if def, err := rt.Definition(context.Background(), "fmt"); err != nil || string(def) != `{"program":"/usr/bin/python3"}` {
		t.Errorf("Definition = %s, %v", def, err)
	}
	if _, err := rt.Definition(context.Background(), "nope"); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("Definition of an unknown tool: %v", err)
	}

	broken := errors.New("fmt.sh cannot be read")
	tool.set("", broken)
	if out := rt.Call(context.Background(), "fmt", call); out.Stage != runtime.StagePreview || !errors.Is(out.Err, broken) || out.Text != broken.Error() {
		t.Errorf("a failing Definition: %s %s %v", out.Stage, out.Text, out.Err)
	}
	tool.mu.Lock()
	tool.panic = true
	tool.mu.Unlock()
	if out := rt.Call(context.Background(), "fmt", call); out.Stage != runtime.StagePreview || !strings.Contains(out.Text, "panicked") {
		t.Errorf("a panicking Definition: %s %s", out.Stage, out.Text)
	}

	// A read passes without asking for a definition.
	reader := &definedTool{hostTool: newHostTool("look", contract.SideEffectNone)}
	reader.panic = true
	rt = build(t, &runtime.Options{Gate: newGate(t, approver.DenyAll())}, reader)
	if out := rt.Call(context.Background(), "look", call); out.Status != runtime.StatusOK || reader.asked.Load() != 0 {
		t.Errorf("a read: %+v, Definition asked %d times", out, reader.asked.Load())
	}
}

// callIDTool records the call ID each of its methods' contexts carries.
type callIDTool struct {
	*hostTool
	mu   sync.Mutex
	seen []string
}

func (c *callIDTool) record(ctx context.Context, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, method+" "+contract.CallID(ctx))
}

func (c *callIDTool) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	c.record(ctx, "preview")
	return c.hostTool.AuthorizationPreview(ctx, call)
}

func (c *callIDTool) Definition(ctx context.Context) (json.RawMessage, error) {
	c.record(ctx, "definition")
	return json.RawMessage(`{}`), nil
}

func (c *callIDTool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	c.record(ctx, "execute")
	return c.hostTool.Execute(ctx, call)
}

// TestToolsAreToldWhichCall: a call's preview, definition and execution
// get contexts that carry its ID, so a tool can tell which of its calls a
// definition judges; an enclosing call's ID does not leak into a call
// without one, and Explain and Runtime.Definition say what they are for.
func TestToolsAreToldWhichCall(t *testing.T) {
	tool := &callIDTool{hostTool: newHostTool("fmt", contract.SideEffectProcess)}
	rt := build(t, &runtime.Options{Gate: newGate(t, approver.AllowAll())}, tool)
	input := json.RawMessage(`{"text":"x"}`)
	if out := rt.Call(context.Background(), "fmt", contract.Call{ID: "c1", Input: input}); out.Status != runtime.StatusOK {
		t.Fatalf("call: %+v", out)
	}
	enclosing := contract.WithCallID(context.Background(), "outer")
	if out := rt.Call(enclosing, "fmt", contract.Call{Input: input}); out.Status != runtime.StatusOK {
		t.Fatalf("call without an ID: %+v", out)
	}
	rt.Explain(context.Background(), "fmt", contract.Call{ID: "c2", Input: input})
	if _, err := rt.Definition(context.Background(), "fmt"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"preview c1", "definition c1", "execute c1",
		"preview ", "definition ", "execute ",
		"preview c2", "definition c2",
		"definition ",
	}
	if diff := cmp.Diff(want, tool.seen); diff != "" {
		t.Errorf("the call IDs the tool's methods were told (-want +got):\n%s", diff)
	}
}
