//go:build unix

package workspace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// An allow rule matches its tool while the tool is as approved; after an
// edit it does not, and says what changed; rules that approve nothing
// here tell nothing.
func TestRuleStates(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	rt, err := openIn(t, ws, home).Runtime(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	source, ok := rt.RuleSource("mark")
	if !ok {
		t.Fatal("no source for mark")
	}
	def, err := rt.Definition(t.Context(), "mark")
	if err != nil {
		t.Fatal(err)
	}
	// The tool edited since: another command.
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"mark": {"description": "Leaves a mark.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/mark.sh", "--twice"]}}}`)
	edited, err := openIn(t, ws, home).Runtime(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rules := []approver.Rule{
		{Tool: "mark", Source: source, Decision: approver.RuleAllow, Definition: def},
		{Tool: "mark", Source: source, Decision: approver.RuleDeny},
		{Tool: "mark", Source: "/elsewhere/tools.json", Decision: approver.RuleAllow, Definition: def},
		{Tool: "absent", Source: approver.AnySource, Decision: approver.RuleAllow, Definition: def},
		// An approval that records no definition matches no tool.
		{Tool: "mark", Source: "/elsewhere/tools.json", Decision: approver.RuleAllow},
	}
	for _, tc := range []struct {
		name string
		got  []RuleState
		want []string // "true", "false" or "nil", for each rule
	}{
		{"as approved", RuleStates(t.Context(), rt, rules), []string{"true", "nil", "nil", "nil", "false"}},
		{"edited", RuleStates(t.Context(), edited, rules), []string{"false", "nil", "nil", "nil", "false"}},
		{"tools not loaded", RuleStates(t.Context(), nil, rules), []string{"nil", "nil", "nil", "nil", "false"}},
	} {
		for i, st := range tc.got {
			got := "nil"
			if st.Current != nil {
				got = map[bool]string{true: "true", false: "false"}[*st.Current]
			}
			if got != tc.want[i] {
				t.Errorf("%s: rule %d: current %s, want %s", tc.name, i, got, tc.want[i])
			}
			if got == "false" && len(st.Changes) == 0 {
				t.Errorf("%s: rule %d does not say what changed", tc.name, i)
			}
		}
	}
}

// TestRuleTarget: a new rule binds to the tool's own source unless told
// otherwise; an allow rule records the tool as it is, so it needs the
// tool, from the source it names.
func TestRuleTarget(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	w := openIn(t, ws, home)
	rt, err := w.Runtime(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := rt.RuleSource("mark")
	def, err := rt.Definition(t.Context(), "mark")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool, source string
		allow              bool
		want               string
		wantDef            bool
		wantErr            error
		wantHere           string
	}{
		{name: "allow: its own source and definition", tool: "mark", allow: true, want: own, wantDef: true},
		{name: "deny: its own source, no definition", tool: "mark", want: own},
		{name: "allow, any source: the definition all the same", tool: "mark", source: approver.AnySource, allow: true, want: approver.AnySource, wantDef: true},
		{name: "the source it comes from", tool: "mark", source: own, allow: true, want: own, wantDef: true},
		{name: "another source", tool: "mark", source: "/elsewhere/tools.json", allow: true, wantHere: own},
		{name: "no such tool", tool: "absent", allow: true, wantErr: runtime.ErrUnknownTool},
	} {
		source, gotDef, err := RuleTarget(t.Context(), rt, tc.tool, tc.source, tc.allow)
		var wrong *RuleSourceError
		switch {
		case tc.wantErr != nil:
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			}
		case tc.wantHere != "":
			if !errors.As(err, &wrong) || wrong.Here != tc.wantHere || wrong.Source != tc.source {
				t.Errorf("%s: error %v, want a *RuleSourceError from %s", tc.name, err, tc.wantHere)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case source != tc.want || (len(gotDef) > 0) != tc.wantDef || (tc.wantDef && string(gotDef) != string(def)):
			t.Errorf("%s: = %q, %s; want %q (definition: %v)", tc.name, source, gotDef, tc.want, tc.wantDef)
		}
	}
}

// TestRuleSource: a path is taken from Options.Dir, its links resolved,
// as rules bind it; the named sources stay.
func TestRuleSource(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	if err := os.Symlink(filepath.Join(ws, ".basis"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(t.Context(), &Options{Root: ws, Dir: ws, Environ: []string{"HOME=" + home}})
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(ws, ".basis", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"":                      "",
		approver.AnySource:      approver.AnySource,
		approver.BuiltinSource:  approver.BuiltinSource,
		"link/tools.json":       real,
		real:                    real,
		"/no/such/../file.json": "/no/file.json",
	} {
		if got := w.RuleSource(in); got != want {
			t.Errorf("RuleSource(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRuleFilter: an empty field matches anything; every set one must
// equal the rule's, a command word for word.
func TestRuleFilter(t *testing.T) {
	allowTest := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	denyCurl := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: "curl *", Decision: approver.RuleDeny}
	deploy := approver.Rule{Tool: "deploy", Source: "/repo/.basis/tools.json", Decision: approver.RuleAsk}
	rules := []approver.Rule{allowTest, denyCurl, deploy}
	for _, tc := range []struct {
		name   string
		filter RuleFilter
		want   []approver.Rule
	}{
		{"empty: every rule", RuleFilter{}, rules},
		{"a tool: its bare, pattern and command rules", RuleFilter{Tool: "spawn"}, []approver.Rule{allowTest, denyCurl}},
		{"a source", RuleFilter{Source: "/repo/.basis/tools.json"}, []approver.Rule{deploy}},
		{"a pattern", RuleFilter{Pattern: "curl *"}, []approver.Rule{denyCurl}},
		{"a command, word for word", RuleFilter{Command: approver.Words("go", "test", "*")}, []approver.Rule{allowTest}},
		{"a command's prefix is not it", RuleFilter{Command: approver.Words("go", "test")}, nil},
		{"a decision", RuleFilter{Tool: "spawn", Decision: approver.RuleDeny}, []approver.Rule{denyCurl}},
		{"every field must match", RuleFilter{Tool: "deploy", Decision: approver.RuleAllow}, nil},
	} {
		var got []approver.Rule
		for i, r := range rules {
			if tc.filter.Match(i+1, r) {
				got = append(got, r)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestUnknownToolRules: a rule for a tool the roster lacks is warned
// about, with the closest name; a system rule and a skipped one are not.
func TestUnknownToolRules(t *testing.T) {
	roster := []contract.Descriptor{{Name: "spawn"}, {Name: "deploy"}}
	rules := []approver.Rule{
		{Tool: "deploy", Source: approver.AnySource, Decision: approver.RuleAllow, File: "/c/rules.json", Number: 1, Scope: approver.ScopeOperator},
		{Tool: "deplyo", Source: approver.AnySource, Decision: approver.RuleAllow, File: "/c/rules.json", Number: 2, Scope: approver.ScopeOperator},
		{Tool: "zzz", Source: approver.AnySource, Decision: approver.RuleDeny, File: ".basis/rules.json", Scope: approver.ScopeWorkspace},
		{Tool: "elsewhere", Source: approver.AnySource, Decision: approver.RuleDeny, File: "/etc/basis/rules.json", Scope: approver.ScopeSystem},
		{Tool: "mcp__srv__x", Source: approver.AnySource, Decision: approver.RuleDeny, File: "/c/rules.json", Number: 3, Scope: approver.ScopeOperator},
	}
	skipMCP := func(r approver.Rule) bool { return strings.HasPrefix(r.Tool, "mcp__") }
	got := unknownToolRules(roster, rules, skipMCP)
	want := []string{
		"/c/rules.json rule 2: " + rules[1].String() + ": no tool named deplyo here (did you mean deploy?)",
		".basis/rules.json: " + rules[2].String() + ": no tool named zzz here",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if n := len(unknownToolRules(roster, rules, nil)); n != 3 {
		t.Errorf("without skip: %d warnings, want 3 (the MCP rule too)", n)
	}
}

// TestAddRule: a new rule is added, the same one again is not, and an
// allow rule that recorded no definition is rebound where it stands.
func TestAddRule(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	w := openIn(t, ws, home)
	bare := approver.Rule{Tool: "mark", Source: "/elsewhere/tools.json", Decision: approver.RuleAllow, Scope: approver.ScopeOperator}
	withDef := bare
	withDef.Definition = json.RawMessage(`{"command":["true"]}`)
	type result struct{ Added, Rebound bool }
	var got []result
	for _, r := range []approver.Rule{bare, bare, withDef} {
		added, rebound, err := w.AddRule(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, result{added, rebound})
	}
	want := []result{{true, false}, {false, false}, {true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	write(t, w.OperatorRules().Path, "{not json")
	if _, _, err := w.AddRule(t.Context(), bare); err == nil {
		t.Error("a broken rules file: no error")
	}
}

// TestRuleStateJSON: an entry of basis rules list --json is the rule,
// its digest, whether it is current (null when that cannot be told) and
// what changed; a pattern reads as written.
func TestRuleStateJSON(t *testing.T) {
	f := false
	deny := approver.Rule{Tool: "mark", Source: "/ws/.basis/tools.json", Pattern: "<*>", Decision: approver.RuleDeny}
	allow := approver.Rule{Tool: "mark", Source: "/ws/.basis/tools.json", Decision: approver.RuleAllow, Definition: json.RawMessage(`{"command":["x"]}`)}
	for _, tc := range []struct {
		name  string
		state RuleState
		want  map[string]any
	}{
		{"no allow rule", RuleState{Rule: deny}, map[string]any{"tool": "mark", "source": "/ws/.basis/tools.json", "pattern": "<*>", "decision": "deny", "scope": "operator", "current": nil}},
		{"a changed tool", RuleState{Rule: allow, Current: &f, Changes: []string{"command"}}, map[string]any{"tool": "mark", "source": "/ws/.basis/tools.json", "decision": "allow", "scope": "operator",
			"definition": map[string]any{"command": []any{"x"}}, "digest": allow.Digest(), "current": false, "changes": []any{"command"}}},
	} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // as basis rules list --json prints it
		if err := enc.Encode(tc.state); err != nil {
			t.Fatal(err)
		}
		data := b.String()
		var got map[string]any
		if err := json.Unmarshal([]byte(data), &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: JSON (-want +got):\n%s", tc.name, diff)
		}
		if strings.Contains(data, `\u003c`) {
			t.Errorf("%s: the pattern is escaped: %s", tc.name, data)
		}
	}
}
