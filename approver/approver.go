//go:build unix

package approver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/basis-go/basis/contract"
)

// Approver decides whether one consequential call may run. The [Gate] asks
// it only when no rule answered, and treats an error, a panic, a missed
// deadline and a zero [Decision] alike: as a denial (fail closed).
//
// Implementations must be safe for concurrent use and should return
// promptly when ctx is done.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to the [Approver] interface.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Answer is an approver's reply.
type Answer struct {
	// Decision is the answer itself. The zero value is not a decision, and a
	// gate denies.
	Decision Decision
	// Reason is what the model reads when the call is denied, so it should
	// say why and, where it can, what to do instead. An empty reason is
	// replaced by one that names the tool.
	Reason string
	// Remember widens what a for-session answer covers; nil means exactly
	// this call (the same tool and the same Subject, byte for byte). It is
	// ignored for Allow and Deny.
	Remember *Remember
	// Persist asks that a for-session answer be kept beyond the session:
	// the gate saves it as an operator rule, bound to the call's source,
	// through [GateOptions.Save]. It is ignored for Allow and Deny.
	Persist bool
}

// Remember says what a for-session answer covers beyond the exact call. At
// most one field may be set; the zero value means the exact call, as a nil
// *Remember does.
type Remember struct {
	// Tool covers every call of the tool.
	Tool bool `json:"tool,omitempty"`
	// Command covers every call whose Subject's commands all match this argv
	// prefix, written as a [Rule]'s Command is ("go", "test", "*").
	Command []string `json:"command,omitempty"`
	// Proposed covers what the rules in [Request.Proposed] cover: the
	// narrowest command rules for the call's commands that the gate
	// proposed. Without proposals it means the exact call.
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
// tool's own preview of what the call would do.
//
// Its JSON form, which [Hook] writes to the hook's stdin, is
//
//	{"call_id": "...", "tool": "...", "input": {...},
//	 "preview": {"side_effect": "process", "capabilities": ["process_exec"],
//	             "dir": "...", "subject": {...}, "summary": "..."}}
//
// with "capabilities" and "dir" left out when empty, and "subject" and
// "input" null when absent; "definition" (the tool's) and "changed" (each
// stale rule and what changed since it approved the tool) when there are
// any.
type Request struct {
	// CallID is the model provider's id for the call.
	CallID string
	// Tool is the name the model called.
	Tool string
	// Source is where the tool was declared: the absolute, symlink-resolved
	// path of its manifest or MCP config, or [BuiltinSource] for spawn.
	// Rules match only calls from the source they are bound to; a request
	// with no source matches only rules bound to [AnySource].
	Source string
	// Preview is the tool's description of this call; approvers judge its
	// Subject, not the tool's name.
	Preview contract.Preview
	// Input is the model's arguments, a JSON object.
	Input json.RawMessage
	// Definition is the tool's definition now ([contract.Definer]): an
	// allow rule matches only a call of the definition it approved, and
	// "always" answers record it. Empty for a tool that has none; only
	// allow rules that record none match such a call.
	Definition json.RawMessage
	// Stale, set by the gate, are the allow rules that would have allowed
	// the call had the tool not changed since they approved it, each with
	// what changed: an approver shows them, so the person asked knows the
	// tool is not what was approved.
	Stale []StaleRule
	// Proposed, set by the gate, are the narrowest operator rules that
	// would allow the call's commands no rule allows yet (see
	// [proposeCommand]), each with the command line as its first Match
	// example: what an approver may offer as "always", and what an answer
	// with Remember.Proposed remembers. Empty for a call that is not an
	// analysed command line.
	Proposed []Rule
	// Warnings, set by the host, are what the person or program asked
	// should know beyond the preview — such as a git config in the
	// repository that names programs git runs. Rules never match them;
	// approvers that ask a person show them.
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

// MarshalJSON encodes the request in the shape documented on [Request],
// without HTML escaping, so "&&" in a command stays "&&".
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

// UnmarshalJSON decodes the shape [Request.MarshalJSON] writes; "changed"
// is words for the approver and is not read back into Stale.
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
	allowAll Approver = ApproverFunc(func(context.Context, Request) (Answer, error) {
		return Answer{Decision: Allow, Reason: "every call is allowed"}, nil
	})
	denyAll Approver = ApproverFunc(func(_ context.Context, req Request) (Answer, error) {
		return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied: this run allows no consequential calls without a rule that allows them", req.Tool)}, nil
	})
)

// AllowAll returns an approver that allows every call it is asked about. A
// gate still denies what a rule denies, since rules answer first.
func AllowAll() Approver { return allowAll }

// DenyAll returns an approver that denies every call it is asked about,
// with a reason that names the tool. It is the approver for a run where
// nobody may be asked.
func DenyAll() Approver { return denyAll }
