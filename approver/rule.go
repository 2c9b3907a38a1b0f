package approver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/basis-go/basis/contract"
)

// Scope says where a rule came from. It is set by whoever loads or makes the
// rule, never read from a file.
type Scope int

const (
	// ScopeOperator: the operator's own rules (<config dir>/rules.json, or
	// rules a host program states). The zero value.
	ScopeOperator Scope = iota
	// ScopeWorkspace: a workspace's .basis/rules.json, which may only deny.
	ScopeWorkspace
	// ScopeSession: made by the gate from a for-session answer; it lives as
	// long as the gate.
	ScopeSession
)

var scopeNames = [...]string{
	ScopeOperator:  "operator",
	ScopeWorkspace: "workspace",
	ScopeSession:   "session",
}

// ErrUnknownScope is wrapped by the error returned for text that names no
// scope.
var ErrUnknownScope = errors.New("unknown scope")

// String returns "operator", "workspace" or "session".
func (s Scope) String() string {
	if s >= 0 && int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// MarshalText implements [encoding.TextMarshaler].
func (s Scope) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(scopeNames) {
		return nil, fmt.Errorf("%w: %d", ErrUnknownScope, int(s))
	}
	return []byte(scopeNames[s]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (s *Scope) UnmarshalText(text []byte) error {
	for i, name := range scopeNames {
		if string(text) == name {
			*s = Scope(i)
			return nil
		}
	}
	return fmt.Errorf("%w: want one of operator, workspace, session", ErrUnknownScope)
}

// Rule is one remembered answer about one tool.
//
// A rule with neither Pattern, Command nor Subject is a bare tool rule: it
// matches every call of Tool. Pattern, Command and Subject narrow it, and at
// most one of them may be set. See the package documentation for how rules
// match and which one wins.
//
// Rules files are read by [ParseRules] and written by [FormatRules]. The
// JSON tags here are for records such as an audit log, which also show
// "subject" and "scope".
type Rule struct {
	// Tool is the tool's name, exactly as the model calls it.
	Tool string `json:"tool"`
	// Pattern is a glob over the call's canonical Subject JSON: '*' matches
	// any run of characters, '?' exactly one, everything else is literal.
	Pattern string `json:"pattern,omitempty"`
	// Command is an argv pattern matched against each entry of the
	// Subject's "commands" list: '*' in a word matches any run of
	// characters within that word, and a last word that is "*" alone
	// matches any number of further words, none included.
	Command []string `json:"command,omitempty"`
	// Subject, when set, matches exactly this canonical Subject, byte for
	// byte. Gates make such rules from for-session answers about one call;
	// rules files cannot hold them.
	Subject string `json:"subject,omitempty"`
	// Allow is the answer: true allows, false denies.
	Allow bool `json:"allow"`
	// Reason is what the model reads when the rule denies a call.
	Reason string `json:"reason,omitempty"`
	// Scope is where the rule came from.
	Scope Scope `json:"scope"`
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

// Validate reports whether r can be used, as a *[RulesError] wrapping
// [ErrInvalidRules] when it cannot. It does not judge Allow against Scope;
// [LoadWorkspaceRules] and [NewGate] do.
func (r Rule) Validate() error {
	if problem := r.problem(); problem != "" {
		return &RulesError{Tool: r.validTool(), Problem: problem, Err: ErrInvalidRules}
	}
	return nil
}

func (r *Rule) problem() string {
	if !contract.ValidName(r.Tool) {
		return `"tool" is not a valid tool name: use 1 to 64 of A-Z a-z 0-9 _ -`
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
	return ""
}

func (r *Rule) validTool() string {
	if contract.ValidName(r.Tool) {
		return r.Tool
	}
	return ""
}

// checkCommandWords explains why words cannot be a command pattern.
func checkCommandWords(words []string) error {
	for i, w := range words {
		if w == "" {
			return fmt.Errorf("has an empty word at position %d; use * for any word", i+1)
		}
	}
	return nil
}

// String describes the rule in one line, as the rules CLI lists it:
// "allow spawn command go test *", "deny deploy", "deny spawn pattern *curl*".
func (r Rule) String() string {
	var b strings.Builder
	if r.Allow {
		b.WriteString("allow ")
	} else {
		b.WriteString("deny ")
	}
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
		b.WriteString(strings.Join(r.Command, " "))
	}
	return b.String()
}
