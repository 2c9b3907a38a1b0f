//go:build unix

package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// RuleSource returns the source operator rules are bound to for the tool
// named name: the symlink-resolved path of its manifest or MCP config,
// [approver.BuiltinSource] for spawn, or "" for a host tool. A command
// line that writes a rule for a tool takes the source from here, so the
// rule answers for this tool and no other of the same name.
func (rt *Runtime) RuleSource(name string) (string, bool) {
	r, ok := rt.roster.Load().byName[name]
	if !ok {
		return "", false
	}
	return r.ruleSource, true
}

// Definition returns the definition of the tool named name as it is now
// ([contract.Definer]): what an allow rule for it records, and must still
// match. It is nil, with no error, for a tool that has none; an unknown
// name is an error wrapping [ErrUnknownTool]; a tool that cannot say what
// it is returns its error.
func (rt *Runtime) Definition(ctx context.Context, name string) (json.RawMessage, error) {
	r, ok := rt.roster.Load().byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTool, name)
	}
	def, _, err := definitionOf(ctx, r)
	return def, err
}

// Explanation is what [Runtime.Explain] found: the stages a call passes
// before the gate, the preview, and what the gate's rules alone would
// decide. Nothing ran and no approver was asked.
type Explanation struct {
	// Refusal is set when the call would be refused before the gate
	// (unknown tool, invalid input, preview refusal); its Stage and Text
	// are what Call would return.
	Refusal *Outcome
	// Preview is the tool's preview of the call.
	Preview *contract.Preview
	// Request is what the gate would be asked about.
	Request approver.Request
	// Rules is the gate's explanation, when the runtime has a gate.
	Rules *approver.Explanation
}

// Explain walks a call through the pipeline up to the gate — tool lookup,
// strict input, schema, preview — and asks the gate which rules would
// decide it, without asking any approver and without running anything.
func (rt *Runtime) Explain(ctx context.Context, name string, call contract.Call) Explanation {
	ro := rt.roster.Load()
	r := ro.byName[name]
	if r == nil {
		out := refused(name, StageUnknown, unknownToolText(name, ro.names()), nil)
		return Explanation{Refusal: &out}
	}
	input, refusal := checkInput(ctx, r, name, call.Input)
	if refusal != nil {
		return Explanation{Refusal: refusal}
	}
	call.Input = input
	ctx = contract.WithCallID(ctx, call.ID)
	preview, text, err := previewOf(ctx, r, call)
	if err != nil {
		out := refused(name, StagePreview, text, err)
		return Explanation{Refusal: &out}
	}
	def, text, err := rt.definitionFor(ctx, r, preview)
	if err != nil {
		out := refused(name, StagePreview, text, err)
		return Explanation{Refusal: &out}
	}
	ex := Explanation{Preview: &preview, Request: approver.Request{CallID: call.ID, Tool: name, Source: r.ruleSource, Definition: def, Preview: preview, Input: input}}
	if rt.gate != nil {
		rules := rt.gate.Explain(ex.Request)
		ex.Rules = &rules
	}
	return ex
}
