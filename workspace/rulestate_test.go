//go:build unix

package workspace

import (
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/approver"
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
	}
	for _, tc := range []struct {
		name string
		got  []RuleState
		want []string // "true", "false" or "nil", for each rule
	}{
		{"as approved", RuleStates(t.Context(), rt, rules), []string{"true", "nil", "nil", "nil"}},
		{"edited", RuleStates(t.Context(), edited, rules), []string{"false", "nil", "nil", "nil"}},
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
