//go:build unix

package workspace

import (
	"errors"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

// TestRemoveRules: rules go by number or by filter; a number the file
// does not have removes nothing.
func TestRemoveRules(t *testing.T) {
	rule := func(tool string) approver.Rule {
		return approver.Rule{Tool: tool, Source: approver.AnySource, Decision: approver.RuleDeny, Scope: approver.ScopeOperator}
	}
	tests := []struct {
		name    string
		numbers []int
		filter  RuleFilter
		gone    []string
		err     *NoRuleError
	}{
		{name: "by number", numbers: []int{1, 3}, gone: []string{"a", "c"}},
		{name: "by filter", filter: RuleFilter{Tool: "b"}, gone: []string{"b"}},
		{name: "a number too many", numbers: []int{2, 4}, err: &NoRuleError{Number: 4, Have: 3}},
		{name: "nothing matches", filter: RuleFilter{Tool: "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openIn(t, markWorkspace(t), t.TempDir())
			for _, tool := range []string{"a", "b", "c"} {
				if _, _, err := w.AddRule(t.Context(), rule(tool)); err != nil {
					t.Fatal(err)
				}
			}
			gone, err := w.RemoveRules(t.Context(), tt.numbers, tt.filter)
			var none *NoRuleError
			if tt.err != nil {
				if !errors.As(err, &none) || *none != *tt.err {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range gone {
				names = append(names, r.Tool)
			}
			if diff := cmp.Diff(tt.gone, names); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
			p, err := w.Policy(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if want := 3 - len(tt.gone); len(p.Operator) != want {
				t.Errorf("%d rules left, want %d", len(p.Operator), want)
			}
		})
	}
}
