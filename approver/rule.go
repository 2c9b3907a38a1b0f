package approver

import (
	"errors"
	"fmt"
	"path/filepath"
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

// Sources a rule can be bound to, besides an absolute path.
const (
	// BuiltinSource is the source of tools built into basis: spawn.
	BuiltinSource = "builtin"
	// AnySource binds a rule to every source on purpose: it matches a tool
	// of its name wherever that tool was declared — in any repository, and
	// a workspace tool that shadows a global one. Only a person who asked
	// for it (basis rules add --any-source) writes it.
	AnySource = "*"
)

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
	// Source is where the tool the rule was written for was declared: the
	// absolute, symlink-resolved path of its manifest or MCP config,
	// [BuiltinSource] for spawn, or [AnySource] for every source. A rule
	// matches only a call whose [Request.Source] is the same.
	//
	// Empty is bound to nothing: an operator or session rule without a
	// source never matches (rules files written before sources existed
	// read that way, and [LoadRules] reports them). Workspace rules need
	// no source: an empty one there matches every source, since a
	// workspace's deny speaks only for that workspace.
	Source string `json:"source,omitempty"`
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
	// File and Number say where a loaded rule was written: the rules file
	// and the rule's position in it, counting from 1, as "basis rules
	// list" numbers it. Loaders set them; they are never written to a
	// rules file.
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
	if problem := sourceProblem(r.Source); problem != "" {
		return problem
	}
	if _, err := r.Scope.MarshalText(); err != nil {
		return "the rule's scope is not operator, workspace or session"
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

// bound reports whether the rule can match anything: an operator rule must
// name a source; a workspace rule need not (it matches every source); a
// session rule without one matches calls that came without one, as the
// call it remembers did.
func (r *Rule) bound() bool {
	return r.Source != "" || r.Scope == ScopeWorkspace || r.Scope == ScopeSession
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
// "allow spawn command go test *", "deny deploy", "deny spawn pattern *curl*",
// followed by where the tool must come from: " from builtin",
// " from /repo/.basis/tools.json", " from any source", or
// " (bound to no source: matches nothing)".
func (r Rule) String() string {
	return r.what() + r.from()
}

func (r Rule) from() string {
	switch r.Source {
	case "":
		if r.Scope == ScopeWorkspace {
			return ""
		}
		return " (bound to no source: matches nothing)"
	case AnySource:
		return " from any source"
	}
	return " from " + r.Source
}

// what is the rule without its source.
func (r Rule) what() string {
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
