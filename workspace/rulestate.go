//go:build unix

package workspace

import (
	"context"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
)

// RuleState is whether an allow rule matches its tool as a runtime holds
// it now.
type RuleState struct {
	// Current is nil when it cannot be told: the rule is no allow rule,
	// is bound to no source or to another one, or its tool is not there.
	Current *bool
	// Changes says what changed in the tool since the rule approved it.
	Changes []string
}

// RuleStates tells, for each of rules, whether an allow rule matches the
// definition of its tool in rt now, and what changed if not (basis rules
// list shows it): a changed tool is asked about again. The result is
// parallel to rules.
func RuleStates(ctx context.Context, rt *runtime.Runtime, rules []approver.Rule) []RuleState {
	out := make([]RuleState, len(rules))
	for i, r := range rules {
		if r.Decision != approver.RuleAllow {
			continue
		}
		here, ok := rt.RuleSource(r.Tool)
		if !ok || r.Source == "" || (r.Source != approver.AnySource && r.Source != here) {
			continue
		}
		def, err := rt.Definition(ctx, r.Tool)
		if err != nil {
			f := false
			out[i] = RuleState{Current: &f, Changes: []string{"the tool cannot say what it is now: " + err.Error()}}
			continue
		}
		ok, changes, err := approver.CompareDefinitions(r.Definition, def)
		if err != nil {
			changes = []string{err.Error()}
		}
		out[i] = RuleState{Current: &ok, Changes: changes}
	}
	return out
}
