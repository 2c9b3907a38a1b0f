//go:build unix

package approver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/basis-go/basis/contract"
)

// Approver decides whether one call may run, when no rule answered. An
// error, a panic, a missed deadline and a zero [Decision] are denials.
// Implementations must be safe for concurrent use.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to the [Approver] interface.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Immediate is implemented by an approver that may answer at once: one
// that waits on nothing (no person, no program, no connection) when
// Immediate reports true. A [Gate] asks such an approver on the goroutine
// of the call. It asks any other on a goroutine of its own, so that an
// approver that ignores its context cannot hold the call past its
// deadline, at the cost of a switch of threads per question, which a
// machine with few cores feels in every call.
type Immediate interface {
	Approver
	Immediate() bool
}

// ImmediateFunc adapts a function that answers at once to the [Immediate]
// interface.
type ImmediateFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ImmediateFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Immediate reports true: f answers at once.
func (ImmediateFunc) Immediate() bool { return true }

// IsImmediate reports whether a says it answers at once (see
// [Immediate]). A host's wrapper around an approver reports what the
// approver it wraps does, when its own work waits on nothing.
func IsImmediate(a Approver) bool {
	im, ok := a.(Immediate)
	return ok && im.Immediate()
}

// Answer is an approver's reply.
type Answer struct {
	// Decision is the answer; the zero value is none, and a gate denies.
	Decision Decision
	// Reason is what the model reads on a denial: why, and what to do
	// instead. Empty: one that names the tool.
	Reason string
	// Remember widens what a for-session answer covers; nil means this
	// exact call.
	Remember *Remember
	// Persist asks the gate to save a for-session answer as an operator
	// rule through [GateOptions.Save].
	Persist bool
}

// Remember says what a for-session answer covers beyond the exact call: at
// most one field set.
type Remember struct {
	// Tool covers every call of the tool.
	Tool bool `json:"tool,omitempty"`
	// Command covers calls whose commands all match this pattern
	// ("go", "test", "*").
	Command []string `json:"command,omitempty"`
	// Proposed covers what [Request.Proposed] covers.
	Proposed bool `json:"proposed,omitempty"`
}

// check explains why r cannot be remembered, or returns nil.
func (r *Remember) check() error {
	if r == nil {
		return nil
	}
	set := 0
	for _, isSet := range []bool{r.Tool, len(r.Command) > 0, r.Proposed} {
		if isSet {
			set++
		}
	}
	if set > 1 {
		return fmt.Errorf("it asks to remember more than one of the whole tool, a command prefix and the proposed rules; choose one")
	}
	if len(r.Command) > 0 {
		if err := checkCommandWords(Words(r.Command...)); err != nil {
			return fmt.Errorf("its command prefix %w", err)
		}
	}
	return nil
}

// Request is what an approver is asked about: one call of one tool, with the
// tool's own preview of what the call would do. [Hook] sends it as JSON
// (docs/rules.md shows the shape).
type Request struct {
	// CallID is the model provider's id for the call.
	CallID string
	// Tool is the name the model called.
	Tool string
	// Source is where the tool was declared: the absolute path of its
	// manifest or MCP config, or [BuiltinSource]. Rules match only calls
	// from their own source.
	Source string
	// Preview is the tool's description of this call; approvers judge its
	// Subject.
	Preview contract.Preview
	// Input is the model's arguments, a JSON object.
	Input json.RawMessage
	// Definition is the tool's definition now ([contract.Definer]): an
	// allow rule matches only the definition it approved.
	Definition json.RawMessage
	// Stale, set by the gate: allow rules that would match had the tool
	// not changed since, with what changed, for the approver to show.
	Stale []StaleRule
	// Proposed, set by the gate: the narrowest rules that would allow the
	// call's uncovered commands, what "always" may offer.
	Proposed []Rule
	// Warnings, set by the host: what the person asked should know beyond
	// the preview. Rules never match them.
	Warnings []string
}

type previewJSON struct {
	SideEffect   contract.SideEffect   `json:"side_effect"`
	Capabilities []contract.Capability `json:"capabilities,omitempty"`
	Dir          string                `json:"dir,omitempty"`
	Subject      json.RawMessage       `json:"subject"`
	Summary      string                `json:"summary"`
}

type requestJSON struct {
	CallID  string          `json:"call_id"`
	Tool    string          `json:"tool"`
	Source  string          `json:"source,omitempty"`
	Preview previewJSON     `json:"preview"`
	Input   json.RawMessage `json:"input"`
	// Definition is the tool's definition.
	Definition json.RawMessage `json:"definition,omitempty"`
	// Changed says, for each stale rule, what changed since it approved
	// the tool.
	Changed []string `json:"changed,omitempty"`
	// Proposed is the proposed rules' command patterns, in the CLI's form.
	Proposed []string `json:"proposed,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// MarshalJSON encodes the request as a hook reads it, without HTML
// escaping.
func (r Request) MarshalJSON() ([]byte, error) {
	w := requestJSON{
		CallID: r.CallID,
		Tool:   r.Tool,
		Source: r.Source,
		Preview: previewJSON{
			SideEffect:   r.Preview.SideEffect,
			Capabilities: r.Preview.Capabilities,
			Dir:          r.Preview.Dir,
			Subject:      nullIfEmpty(r.Preview.Subject),
			Summary:      r.Preview.Summary,
		},
		Input:      nullIfEmpty(r.Input),
		Definition: r.Definition,
		Warnings:   r.Warnings,
	}
	for _, st := range r.Stale {
		w.Changed = append(w.Changed, st.String())
	}
	for _, p := range r.Proposed {
		w.Proposed = append(w.Proposed, FormatCommand(p.Command))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON decodes what [Request.MarshalJSON] writes, but Stale.
func (r *Request) UnmarshalJSON(data []byte) error {
	var w requestJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = Request{
		CallID: w.CallID,
		Tool:   w.Tool,
		Source: w.Source,
		Preview: contract.Preview{
			SideEffect:   w.Preview.SideEffect,
			Capabilities: w.Preview.Capabilities,
			Dir:          w.Preview.Dir,
			Subject:      emptyIfNull(w.Preview.Subject),
			Summary:      w.Preview.Summary,
		},
		Input:      emptyIfNull(w.Input),
		Definition: emptyIfNull(w.Definition),
		Warnings:   w.Warnings,
	}
	for _, text := range w.Proposed {
		words, err := ParseCommand(text)
		if err != nil {
			return fmt.Errorf("proposed rule: %w", err)
		}
		r.Proposed = append(r.Proposed, Rule{Tool: w.Tool, Source: w.Source, Command: words, Decision: RuleAllow})
	}
	return nil
}

func nullIfEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func emptyIfNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// allowAll and denyAll are behind functions so that no importer can
// replace what every other importer gets.
var (
	allowAll Approver = ImmediateFunc(func(context.Context, Request) (Answer, error) {
		return Answer{Decision: Allow, Reason: "every call is allowed"}, nil
	})
	denyAll Approver = ImmediateFunc(func(_ context.Context, req Request) (Answer, error) {
		return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied: this run allows no consequential calls without a rule that allows them", req.Tool)}, nil
	})
)

// AllowAll returns an approver that allows every call it is asked about.
func AllowAll() Approver { return allowAll }

// DenyAll returns an approver that denies every call it is asked about:
// for a run where nobody may be asked.
func DenyAll() Approver { return denyAll }
