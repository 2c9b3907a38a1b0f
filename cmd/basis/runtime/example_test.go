//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// phrase is a host's own tool. Its preview says what the call would do;
// its side effect decides whether the gate asks anybody.
type phrase struct {
	name   string
	effect contract.SideEffect
	say    func(text string) string
	// source is where the tool came from, for messages and for
	// ReplaceSource; empty means the host.
	source string
}

func (p *phrase) Descriptor() contract.Descriptor {
	return contract.Descriptor{
		Name:        p.name,
		Description: "Turn a text into another.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		SideEffect:  p.effect,
		Binding:     contract.BindingHost,
		Source:      p.source,
	}
}

func (p *phrase) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	// call.Input is the canonical input: the bytes Execute receives too.
	subject, err := contract.CanonicalJSON(map[string]any{"tool": p.name, "input": call.Input})
	return contract.Preview{SideEffect: p.effect, Subject: subject, Summary: p.name}, err
}

func (p *phrase) Execute(_ context.Context, call contract.Call) (contract.Result, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return contract.Result{}, err
	}
	return contract.Result{Text: p.say(in.Text)}, nil
}

func Example() {
	// A binding hands over its own slice type; runtime.Tools converts it.
	tools := []*phrase{
		{name: "greeting", effect: contract.SideEffectNone, say: func(s string) string { return "hello, " + s }},
		{name: "shout", effect: contract.SideEffectLocalState, say: strings.ToUpper},
	}
	b := runtime.NewBuilder()
	if err := b.Add(runtime.Tools(tools)...); err != nil {
		fmt.Println(err)
		return
	}
	// The operator allows shout; anything else consequential is denied.
	deny := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		return approver.Answer{Decision: approver.Deny, Reason: "nobody is here to approve it"}, nil
	})
	gate, err := approver.NewGate(deny, &approver.GateOptions{Rules: []approver.Rule{{Tool: "shout", Decision: approver.RuleAllow, Source: approver.AnySource}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	for _, c := range []runtime.BatchCall{
		{Name: "shout", Call: contract.Call{ID: "1", Input: json.RawMessage(`{"text":"ship it"}`)}},
		{Name: "greeting", Call: contract.Call{ID: "2", Input: json.RawMessage(`{"text":"Ada"}`)}},
		{Name: "shout", Call: contract.Call{ID: "3", Input: json.RawMessage(`{"text":42}`)}},
		{Name: "shout", Call: contract.Call{ID: "4", Input: json.RawMessage(`{"text":"a","Text":"b"}`)}},
		{Name: "shuot", Call: contract.Call{ID: "5", Input: json.RawMessage(`{"text":"x"}`)}},
	} {
		out := rt.Call(ctx, c.Name, c.Call)
		fmt.Printf("%s %s: %s (invalid input: %t)\n", c.Name, out.Status, out.Text, errors.Is(out.Err, contract.ErrInvalidInput))
	}
	// Output:
	// shout ok: SHIP IT (invalid input: false)
	// greeting ok: hello, Ada (invalid input: false)
	// shout refused: the input for shout does not match its schema: /text: expected string, but got number (invalid input: true)
	// shout refused: the input for shout is invalid: /Text: another key of this object differs from it only in letter case; programs may read them as one, so use one spelling (invalid input: true)
	// shuot refused: there is no tool named "shuot"; did you mean "shout"? (invalid input: false)
}

// A host that watches the roster — an MCP server sending
// notifications/tools/list_changed, say — takes the Changed channel before
// reading the roster, and waits on it.
func ExampleRuntime_ReplaceSource() {
	word := func(name, source string) contract.ExecutableTool {
		return &phrase{name: name, source: source, say: strings.ToLower}
	}
	rt, err := func() (*runtime.Runtime, error) {
		b := runtime.NewBuilder()
		if err := b.Add(word("build", "/repo/.basis/tools.json"), word("lint", "/home/u/.config/basis/tools.json")); err != nil {
			return nil, err
		}
		return b.Build(nil)
	}()
	if err != nil {
		fmt.Println(err)
		return
	}
	names := func() (out []string) {
		for _, d := range rt.Tools() {
			out = append(out, d.Name)
		}
		return out
	}
	changed := rt.Changed()
	fmt.Println(names())

	// The workspace manifest was edited: it now declares build and test.
	err = rt.ReplaceSource("/repo/.basis/tools.json", []contract.ExecutableTool{
		word("build", "/repo/.basis/tools.json"), word("test", "/repo/.basis/tools.json"),
	})
	fmt.Println(err)
	<-changed
	fmt.Println(names())

	// A replacement that collides with another source changes nothing.
	err = rt.ReplaceSource("/repo/.basis/tools.json", []contract.ExecutableTool{word("lint", "/repo/.basis/tools.json")})
	fmt.Println(err)
	fmt.Println(names())
	// Output:
	// [build lint]
	// <nil>
	// [build test lint]
	// tool "lint" from /repo/.basis/tools.json collides with tool "lint" from /home/u/.config/basis/tools.json: rename one of them
	// [build test lint]
}

// A binding returns its own slice type ([]*declared.Tool, say), which Go
// does not convert to []contract.ExecutableTool by itself; Tools does.
func ExampleTools() {
	loaded := []*phrase{
		{name: "upper", say: strings.ToUpper, source: "/repo/.basis/tools.json"},
		{name: "lower", say: strings.ToLower, source: "/repo/.basis/tools.json"},
	}
	b := runtime.NewBuilder()
	if err := b.Add(runtime.Tools(loaded)...); err != nil {
		fmt.Println(err)
		return
	}
	rt, err := b.Build(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range rt.Tools() {
		fmt.Println(d.Name, "from", d.Source)
	}
	// Output:
	// upper from /repo/.basis/tools.json
	// lower from /repo/.basis/tools.json
}

// hostTurn is a host's whole use of the runtime: register its tools, build
// the gate and the runtime, export the tool definitions for the model
// request, and run what the model asked for.
func hostTurn(ctx context.Context, hostTools []*phrase, myTool contract.ExecutableTool, rules []approver.Rule, auditFile io.Writer, calls []runtime.BatchCall, input json.RawMessage) error {
	b := runtime.NewBuilder()
	if err := b.Add(runtime.Tools(hostTools)...); err != nil { // any []T of tools: declared.Load's []*declared.Tool, say
		return err
	}
	if err := b.Add(myTool); err != nil { // one contract.ExecutableTool of the host's own
		return err
	}
	gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: rules})
	if err != nil {
		return err
	}
	rt, err := b.Build(&runtime.Options{Gate: gate, Audit: auditFile})
	if err != nil {
		return err
	}
	defs := rt.AnthropicTools()          // or rt.OpenAITools(), for the model request
	outcomes := rt.CallBatch(ctx, calls) // one model turn; results in call order
	out := rt.Call(ctx, "word_count", contract.Call{ID: "call_9", Input: input})

	for _, d := range defs {
		fmt.Println("tool:", d.Name)
	}
	for _, o := range append(outcomes, out) {
		fmt.Printf("%s %s %s: %s\n", o.CallID, o.Tool, o.Status, o.Text)
	}
	return nil
}

// A host with tools of its own: reads run unasked, a rule allows shout,
// and DenyAll refuses whatever else is consequential, as a host with
// nobody to ask does. A call that runs leaves two audit records, its start
// and its end; a refused call, its end.
func Example_host() {
	wordCount := func(s string) string { return strconv.Itoa(len(strings.Fields(s))) }
	hostTools := []*phrase{
		{name: "word_count", effect: contract.SideEffectNone, say: wordCount},
		{name: "shout", effect: contract.SideEffectLocalState, say: strings.ToUpper},
	}
	myTool := &phrase{name: "publish", effect: contract.SideEffectExternal, say: strings.ToLower}
	rules := []approver.Rule{{Tool: "shout", Decision: approver.RuleAllow, Source: approver.AnySource}}
	auditFile, err := os.CreateTemp("", "audit-*.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(auditFile.Name())
	defer auditFile.Close()
	calls := []runtime.BatchCall{
		{Name: "word_count", Call: contract.Call{ID: "call_1", Input: json.RawMessage(`{"text":"one two three"}`)}},
		{Name: "shout", Call: contract.Call{ID: "call_2", Input: json.RawMessage(`{"text":"ship it"}`)}},
		{Name: "publish", Call: contract.Call{ID: "call_3", Input: json.RawMessage(`{"text":"Release Notes"}`)}},
	}

	err = hostTurn(context.Background(), hostTools, myTool, rules, auditFile, calls, json.RawMessage(`{"text":"four words in all"}`))
	fmt.Println(err)

	audit, _ := os.ReadFile(auditFile.Name())
	for line := range strings.Lines(string(audit)) {
		var r runtime.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			fmt.Println(err)
			return
		}
		if r.Event == runtime.AuditStart {
			fmt.Println("audit:", r.CallID, r.Tool, "start")
			continue
		}
		fmt.Println("audit:", r.CallID, r.Tool, "end", r.Outcome)
	}
	// Output:
	// tool: word_count
	// tool: shout
	// tool: publish
	// call_1 word_count ok: 3
	// call_2 shout ok: SHIP IT
	// call_3 publish refused: tool publish denied: this run allows no consequential calls without a rule that allows them
	// call_9 word_count ok: 4
	// <nil>
	// audit: call_1 word_count start
	// audit: call_1 word_count end ok
	// audit: call_2 shout start
	// audit: call_2 shout end ok
	// audit: call_3 publish end refused
	// audit: call_9 word_count start
	// audit: call_9 word_count end ok
}
