//go:build unix

package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// RuleState is whether an allow rule matches its tool as a runtime holds
// it now.
type RuleState struct {
	// Rule is the rule it tells of.
	Rule approver.Rule
	// Current is nil when it cannot be told: the rule is no allow rule,
	// or records a definition but is bound to no source or to another
	// one, or its tool is not there.
	Current *bool
	// Changes says what changed in the tool since the rule approved it.
	Changes []string
}

// RuleStates tells, for each of rules, whether an allow rule matches the
// definition of its tool in rt now, and what changed if not (basis rules
// list shows it): a changed tool is asked about again. An allow rule that
// records no definition matches no tool that has one, and says so. A nil
// rt is a workspace whose tools could not be loaded: nothing else can be
// told. The result is parallel to rules.
func RuleStates(ctx context.Context, rt *runtime.Runtime, rules []approver.Rule) []RuleState {
	out := make([]RuleState, len(rules))
	for i, r := range rules {
		out[i].Rule = r
		if r.Decision != approver.RuleAllow {
			continue
		}
		var here string
		ok := rt != nil
		if ok {
			here, ok = rt.RuleSource(r.Tool)
		}
		if !ok || r.Source == "" || (r.Source != approver.AnySource && r.Source != here) {
			if len(r.Definition) == 0 {
				f := false
				out[i] = RuleState{Rule: r, Current: &f, Changes: []string{"the rule records no definition of the tool: it matches no declared, MCP or spawn tool"}}
			}
			continue
		}
		def, err := rt.Definition(ctx, r.Tool)
		if err != nil {
			f := false
			out[i] = RuleState{Rule: r, Current: &f, Changes: []string{"the tool cannot say what it is now: " + err.Error()}}
			continue
		}
		ok, changes, err := approver.CompareDefinitions(r.Definition, def)
		if err != nil {
			changes = []string{err.Error()}
		}
		out[i] = RuleState{Rule: r, Current: &ok, Changes: changes}
	}
	return out
}

// MarshalJSON is an entry of basis rules list --json: the rule's JSON
// form with "digest" (of the definition it records, if any), "current"
// (null when it cannot be told) and "changes".
func (s RuleState) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a pattern such as "<*>" reads as written
	err := enc.Encode(struct {
		approver.Rule
		Digest  string   `json:"digest,omitempty"`
		Current *bool    `json:"current"`
		Changes []string `json:"changes,omitempty"`
	}{s.Rule, s.Rule.Digest(), s.Current, s.Changes})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// RuleSource is a rule's source as an operator names it (basis rules
// --source): a path, relative to [Options.Dir], made absolute with its
// symlinks resolved, as rules bind it. "", [approver.AnySource] and
// [approver.BuiltinSource] stay as they are.
func (w *Workspace) RuleSource(source string) string {
	if source == "" || source == approver.AnySource || source == approver.BuiltinSource {
		return source
	}
	if !filepath.IsAbs(source) {
		source = filepath.Join(w.dir, source)
	}
	if resolved, err := filepath.EvalSymlinks(source); err == nil {
		return resolved
	}
	return filepath.Clean(source)
}

// RuleTarget is what a new rule for tool binds to in rt, the runtime of
// the workspace's tools: source ("" for the tool's own, else from
// [Workspace.RuleSource]), and for an allow rule the definition of the
// tool as it is now, which the rule records (it approves the tool the
// operator can look at here, so the tool must be in rt). A tool rt does
// not have is an error wrapping [runtime.ErrUnknownTool]; a source the
// tool does not come from, a *[RuleSourceError].
func RuleTarget(ctx context.Context, rt *runtime.Runtime, tool, source string, allow bool) (string, json.RawMessage, error) {
	here, ok := rt.RuleSource(tool)
	switch {
	case !ok:
		return "", nil, fmt.Errorf("%w: %s", runtime.ErrUnknownTool, tool)
	case source == "" && here == "":
		return "", nil, &RuleSourceError{Tool: tool}
	case source == "":
		source = here
	case source != approver.AnySource && source != here:
		return "", nil, &RuleSourceError{Tool: tool, Here: here, Source: source}
	}
	if !allow {
		return source, nil, nil
	}
	def, err := rt.Definition(ctx, tool)
	if err != nil {
		return "", nil, fmt.Errorf("%s cannot be approved as it is now: %v", tool, err)
	}
	return source, def, nil
}

// RuleSourceError is [RuleTarget]'s refusal to bind a rule for Tool to
// Source, when the tool comes from Here ("": a tool of the host's, with no
// source a rule could name).
type RuleSourceError struct{ Tool, Here, Source string }

// Error says where the tool comes from.
func (e *RuleSourceError) Error() string {
	if e.Here == "" {
		return fmt.Sprintf("tool %s has no source to bind a rule to", e.Tool)
	}
	return fmt.Sprintf("the tool %s here comes from %s, not %s", e.Tool, e.Here, e.Source)
}

// RuleFilter selects rules for [approver.RulesFile.Remove] (basis rules remove
// --tool): a field left empty matches any rule, so {Tool: "spawn"}
// selects every rule of spawn, bare, pattern and command rules alike.
type RuleFilter struct {
	Tool, Source, Pattern string
	// Command, when set, must equal the rule's word for word.
	Command  []approver.CommandWord
	Decision approver.RuleDecision
}

// Match reports whether r is selected; it has [approver.RulesFile.Remove]'s
// signature, and the number does not matter.
func (q RuleFilter) Match(_ int, r approver.Rule) bool {
	return (q.Tool == "" || q.Tool == r.Tool) &&
		(q.Source == "" || q.Source == r.Source) &&
		(q.Pattern == "" || q.Pattern == r.Pattern) &&
		(len(q.Command) == 0 || slices.EqualFunc(q.Command, r.Command, func(x, y approver.CommandWord) bool { return slices.Equal(x, y) })) &&
		(q.Decision == "" || q.Decision == r.Decision)
}

// unknownToolRules warns about the operator's and the workspace's rules
// that name a tool the roster (the runtime's Tools) does not have: a typo,
// or a rule for another repository's tool, harmless but worth knowing
// about. A system rule is the administrator's, for every workspace, and
// is not judged; nor is a rule skip reports (nil: none), such as one for
// an MCP server's tool when no server was started.
func unknownToolRules(roster []contract.Descriptor, rules []approver.Rule, skip func(approver.Rule) bool) []string {
	var names []string
	have := map[string]bool{}
	for _, d := range roster {
		have[d.Name] = true
		names = append(names, d.Name)
	}
	var out []string
	for _, r := range rules {
		if have[r.Tool] || r.Scope == approver.ScopeSystem || (skip != nil && skip(r)) {
			continue
		}
		where := r.File
		if r.Number > 0 {
			where += " rule " + strconv.Itoa(r.Number)
		}
		msg := where + ": " + r.String() + ": no tool named " + r.Tool + " here"
		if close := configfile.Suggest(r.Tool, names, 1); len(close) > 0 {
			msg += " (did you mean " + close[0] + "?)"
		}
		out = append(out, msg)
	}
	return out
}
