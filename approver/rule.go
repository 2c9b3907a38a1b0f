//go:build unix

package approver

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/contract"
)

// Scope says which layer a rule came from; loaders and the gate set it. The
// zero value means ScopeOperator.
type Scope string

const (
	// ScopeOperator: the operator's <config dir>/rules.json, or a host's.
	ScopeOperator Scope = "operator"
	// ScopeWorkspace: a workspace's .basis/rules.json: deny and ask only.
	ScopeWorkspace Scope = "workspace"
	// ScopeSession: made by the gate from a for-session answer.
	ScopeSession Scope = "session"
	// ScopeSystem: /etc/basis/rules.json, whose deny and ask nothing
	// overrides.
	ScopeSystem Scope = "system"
)

var scopes = []Scope{ScopeOperator, ScopeWorkspace, ScopeSession, ScopeSystem}

// or returns s, or ScopeOperator for the zero value.
func (s Scope) or() Scope {
	if s == "" {
		return ScopeOperator
	}
	return s
}

// MarshalText writes the zero value as "operator".
func (s Scope) MarshalText() ([]byte, error) { return marshalEnum(s.or(), "scope", scopes) }

// UnmarshalText accepts only the words of the constants above.
func (s *Scope) UnmarshalText(text []byte) error { return unmarshalEnum(s, text, "scope", scopes) }

// RuleDecision is what a rule says about the calls it matches. The zero
// value means RuleDeny.
type RuleDecision string

const (
	// RuleDeny refuses the call, nobody asked.
	RuleDeny RuleDecision = "deny"
	// RuleAsk sends the call to the approver even when an allow rule also
	// matches.
	RuleAsk RuleDecision = "ask"
	// RuleAllow lets the call run unasked.
	RuleAllow RuleDecision = "allow"
)

var ruleDecisions = []RuleDecision{RuleDeny, RuleAsk, RuleAllow}

// or returns d, or RuleDeny for the zero value.
func (d RuleDecision) or() RuleDecision {
	if d == "" {
		return RuleDeny
	}
	return d
}

// MarshalText writes the zero value as "deny".
func (d RuleDecision) MarshalText() ([]byte, error) {
	return marshalEnum(d.or(), "rule decision", ruleDecisions)
}

// UnmarshalText accepts only the words of the constants above.
func (d *RuleDecision) UnmarshalText(text []byte) error {
	return unmarshalEnum(d, text, "rule decision", ruleDecisions)
}

// Sources a rule can be bound to, besides an absolute path.
const (
	BuiltinSource = "builtin" // tools built into basis: spawn
	// AnySource binds a rule to every source on purpose (basis rules add
	// --any-source).
	AnySource = "*"
)

// CommandWord is one word of a command pattern: its alternatives, any of
// which may match. In JSON one alternative is a string, several a list:
// ["git", ["push", "fetch"], "*"].
type CommandWord []string

// Words makes a command pattern of plain words: Words("go", "test", "*").
func Words(words ...string) []CommandWord {
	out := make([]CommandWord, len(words))
	for i, w := range words {
		out[i] = CommandWord{w}
	}
	return out
}

// MarshalJSON writes a single alternative as a string, several as a list.
func (w CommandWord) MarshalJSON() ([]byte, error) {
	if len(w) == 1 {
		return marshalNoEscape(w[0])
	}
	return marshalNoEscape([]string(w))
}

// UnmarshalJSON reads a string or a list of strings.
func (w *CommandWord) UnmarshalJSON(data []byte) error {
	var one string
	if json.Unmarshal(data, &one) == nil {
		*w = CommandWord{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return errors.New("a command word is a string or a list of strings")
	}
	*w = many
	return nil
}

// Rule is one remembered answer about one tool. At most one of Pattern,
// Command and Subject narrows it; with none it is a bare rule, for every
// call of Tool. How rules match and which wins: docs/rules.md. The JSON
// tags are for records such as the audit log.
type Rule struct {
	// Tool is the tool's name, exactly as the model calls it.
	Tool string `json:"tool"`
	// Source is where the tool was declared: an absolute path,
	// [BuiltinSource] or [AnySource]. An allow rule without one matches
	// nothing; a deny or ask rule without one matches every source.
	Source string `json:"source,omitempty"`
	// Pattern is a glob over the call's Subject JSON ('*' and '?').
	Pattern string `json:"pattern,omitempty"`
	// Command is an argv pattern matched against each of the Subject's
	// "commands".
	Command []CommandWord `json:"command,omitempty"`
	// Subject matches exactly this Subject: session rules only.
	Subject string `json:"subject,omitempty"`
	// Decision is the answer: allow, ask or deny (the zero value).
	Decision RuleDecision `json:"decision"`
	// Reason is what the model reads when the rule denies a call.
	Reason string `json:"reason,omitempty"`
	// Match and NotMatch are examples the rule must and must not match
	// ([Rule.CheckExamples]).
	Match    []string `json:"match,omitempty"`
	NotMatch []string `json:"not_match,omitempty"`
	// Definition, on an allow rule, is the definition of the tool it
	// approved: it matches only while the tool is still that, but for a
	// tighter sandbox. Empty matches only a tool that has none.
	Definition json.RawMessage `json:"definition,omitempty"`
	// Scope is where the rule came from.
	Scope Scope `json:"scope"`
	// File and Number say where a loaded rule was written (Number counts
	// from 1); they are never written to a rules file.
	File   string `json:"file,omitempty"`
	Number int    `json:"number,omitempty"`
}

// ruleKind is what a rule matches, from most to least specific.
type ruleKind int

const (
	kindSubject ruleKind = iota
	kindPattern
	kindCommand
	kindTool
)

func (r *Rule) kind() ruleKind {
	switch {
	case r.Subject != "":
		return kindSubject
	case r.Pattern != "":
		return kindPattern
	case len(r.Command) > 0:
		return kindCommand
	}
	return kindTool
}

// Validate reports, as a *[configfile.Error], why r cannot be used, or
// returns nil. It does not judge the decision against the scope;
// [LoadRules] and [NewGate] do.
func (r Rule) Validate() error {
	if problem := r.problem(); problem != "" {
		return ruleError("", 0, 0, 0, r.validTool(), problem)
	}
	return r.CheckExamples()
}

func (r *Rule) problem() string {
	if !contract.ValidName(r.Tool) {
		return `"tool" is not a valid tool name: use 1 to 64 of A-Z a-z 0-9 _ -`
	}
	if problem := sourceProblem(r.Source); problem != "" {
		return problem
	}
	if !slices.Contains(ruleDecisions, r.Decision.or()) {
		return "the rule's decision is not allow, ask or deny"
	}
	if !slices.Contains(scopes, r.Scope.or()) {
		return "the rule's scope is not operator, workspace, session or system"
	}
	set := 0
	for _, isSet := range []bool{r.Pattern != "", len(r.Command) > 0, r.Subject != ""} {
		if isSet {
			set++
		}
	}
	if set > 1 {
		return `a rule has at most one of "pattern", "command" and an exact subject; write one rule for each`
	}
	if err := checkCommandWords(r.Command); err != nil {
		return `"command" ` + err.Error()
	}
	if len(r.Definition) > 0 {
		if r.Decision != RuleAllow {
			return definitionOnDenyProblem
		}
		if _, err := parseDefinition(r.Definition); err != nil {
			return `"definition" must be a JSON object: the definition of the tool the rule approved`
		}
	}
	return ""
}

const definitionOnDenyProblem = `"definition" belongs to allow rules only: a deny or ask rule holds whatever the tool has become, so leave it out`

func (r *Rule) validTool() string {
	if contract.ValidName(r.Tool) {
		return r.Tool
	}
	return ""
}

// sourceProblem explains why source cannot bind a rule, or returns "".
func sourceProblem(source string) string {
	switch {
	case source == "" || source == BuiltinSource || source == AnySource:
		return ""
	case !filepath.IsAbs(source) || filepath.Clean(source) != source:
		return `"source" must be the absolute, clean path of the manifest or MCP config that declared the tool, "builtin" for spawn, or "*" for any source`
	}
	return ""
}

// bound reports whether the rule can match anything. An allow rule from
// the operator or the system must name a source. Deny and ask rules, which
// only take power away, and workspace rules need none: without one they
// match every source. A session rule without one matches calls that came
// without one, as the call it remembers did.
func (r *Rule) bound() bool {
	return r.Source != "" || r.Decision != RuleAllow || r.Scope == ScopeWorkspace || r.Scope == ScopeSession
}

// checkCommandWords explains why words cannot be a command pattern.
func checkCommandWords(words []CommandWord) error {
	for i, w := range words {
		if len(w) == 0 {
			return fmt.Errorf("has an empty list of alternatives at word %d", i+1)
		}
		for _, alt := range w {
			if alt == "" {
				return fmt.Errorf("has an empty word at position %d; use * for any word", i+1)
			}
		}
	}
	return nil
}

// String describes the rule in one line, as "basis rules list" does:
// "allow spawn command go test * from builtin".
func (r Rule) String() string {
	return r.what() + r.from()
}

func (r Rule) from() string {
	switch {
	case r.Source == AnySource:
		return " from any source"
	case r.Source != "":
		return " from " + r.Source
	case r.Scope == ScopeWorkspace || r.Scope == ScopeSession:
		return ""
	case r.Decision != RuleAllow:
		return " from any source"
	}
	return " (bound to no source: matches nothing)"
}

// what is the rule without its source.
func (r Rule) what() string {
	var b strings.Builder
	b.WriteString(string(r.Decision.or()))
	b.WriteByte(' ')
	b.WriteString(r.Tool)
	switch r.kind() {
	case kindSubject:
		b.WriteString(" subject ")
		b.WriteString(r.Subject)
	case kindPattern:
		b.WriteString(" pattern ")
		b.WriteString(r.Pattern)
	case kindCommand:
		b.WriteString(" command ")
		b.WriteString(FormatCommand(r.Command))
	}
	return b.String()
}
