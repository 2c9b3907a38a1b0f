//go:build unix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// Policy is every rule a call is judged by, in its layers: the system's
// (/etc/basis/rules.json, which nobody below may loosen), the operator's
// and the workspace's (deny and ask only).
type Policy struct {
	System, Operator, Workspace []approver.Rule
	// NoOperatorAllowRules: the system file says the operator's rules may
	// only deny and ask.
	NoOperatorAllowRules bool
	// AskReadOnly: a rules file says "ask_read_only": true, so read-only
	// calls are asked about too. Any layer's true holds; a false in
	// another file does not undo it.
	AskReadOnly bool
	// Warnings are rules that load but can never match, each with the
	// command that fixes it.
	Warnings []approver.Warning
}

// Rules is every layer's rules, in the order the gate consults them.
func (p *Policy) Rules() []approver.Rule {
	return slices.Concat(p.System, p.Operator, p.Workspace)
}

// Policy reads the three rules files. Every problem of every file is
// returned, errors.Join'ed, beside the rules that did load.
func (w *Workspace) Policy(ctx context.Context) (*Policy, error) {
	var p Policy
	var errs []error
	sys, err := approver.LoadRules(ctx, w.SystemRulesPath(), approver.ScopeSystem)
	if err != nil {
		errs = append(errs, err)
	} else {
		p.System, p.NoOperatorAllowRules = sys.Rules, sys.NoOperatorAllowRules
		p.AskReadOnly = p.AskReadOnly || sys.AskReadOnly
		p.Warnings = append(p.Warnings, sys.Warnings...)
	}
	operator, err := approver.LoadRules(ctx, w.OperatorRules().Path, approver.ScopeOperator)
	if err != nil {
		errs = append(errs, err)
	} else {
		p.Operator = operator.Rules
		p.AskReadOnly = p.AskReadOnly || operator.AskReadOnly
		p.Warnings = append(p.Warnings, operator.Warnings...)
	}
	if err := w.CheckInside(w.WorkspaceRulesPath()); err != nil {
		errs = append(errs, err)
	} else {
		ws, err := approver.LoadRules(ctx, w.WorkspaceRulesPath(), approver.ScopeWorkspace)
		if err != nil {
			errs = append(errs, err)
		} else {
			p.Workspace = ws.Rules
			p.AskReadOnly = p.AskReadOnly || ws.AskReadOnly
		}
	}
	return &p, errors.Join(errs...)
}

// OperatorRules is the operator's rules file, in the configuration
// directory: where "always" answers are saved.
func (w *Workspace) OperatorRules() *approver.RulesFile {
	return &approver.RulesFile{Path: filepath.Join(w.configDir, approver.OperatorRulesFile)}
}

// AddRule adds r to [Workspace.OperatorRules] ([approver.RulesFile.Add]):
// added is false when the file holds r already; rebound, that r took the
// place, and the number, of an allow rule for the same calls that
// recorded no definition.
func (w *Workspace) AddRule(ctx context.Context, r approver.Rule) (added, rebound bool, err error) {
	file := w.OperatorRules()
	before, err := approver.LoadRules(ctx, file.Path, approver.ScopeOperator)
	if err != nil {
		return false, false, err
	}
	if added, err = file.Add(r); err != nil || !added {
		return false, false, err
	}
	after, err := approver.LoadRules(ctx, file.Path, approver.ScopeOperator)
	return true, err == nil && len(after.Rules) == len(before.Rules), nil
}

// RemoveRules removes from [Workspace.OperatorRules] the rules of the
// given numbers (as [Policy.Operator] numbers them) or, when there are
// none, every rule filter selects, and returns them. A number the file
// does not have removes nothing and is a *[NoRuleError].
func (w *Workspace) RemoveRules(ctx context.Context, numbers []int, filter RuleFilter) ([]approver.Rule, error) {
	file := w.OperatorRules()
	match := filter.Match
	if len(numbers) > 0 {
		current, err := approver.LoadRules(ctx, file.Path, approver.ScopeOperator)
		if err != nil {
			return nil, err
		}
		for _, n := range numbers {
			if n < 1 || n > len(current.Rules) {
				return nil, &NoRuleError{Number: n, Have: len(current.Rules)}
			}
		}
		match = func(number int, _ approver.Rule) bool { return slices.Contains(numbers, number) }
	}
	return file.Remove(match)
}

// NoRuleError is [Workspace.RemoveRules]'s refusal of a rule number the
// operator's rules file does not have: it has Have rules.
type NoRuleError struct{ Number, Have int }

// Error says how many rules there are.
func (e *NoRuleError) Error() string {
	return fmt.Sprintf("there is no rule %d (there are %d)", e.Number, e.Have)
}

// WorkspaceRulesPath is the workspace's rules file, .basis/rules.json.
func (w *Workspace) WorkspaceRulesPath() string {
	return filepath.Join(w.root, approver.WorkspaceRulesFile)
}

// SystemRulesPath is the administrator's rules file; the environment may
// move it (tests do) but never turn it off.
func (w *Workspace) SystemRulesPath() string {
	if dir := w.getenv(approver.SystemConfigDirEnv); dir != "" {
		return absFrom(w.root, dir) + "/" + approver.SystemRulesFile
	}
	return approver.DefaultSystemConfigDir + "/" + approver.SystemRulesFile
}

// Gate builds the gate of every layer's rules, as they are now. a answers
// what no rule decides (nil: a denial); whoever it asks is shown what the
// repository's git config makes git run, for a call that runs git; its
// "always" answers are saved to [Workspace.OperatorRules] (an approver that
// saves them itself, such as the terminal one, is told that path by the
// host).
func (w *Workspace) Gate(ctx context.Context, a approver.Approver) (*approver.Gate, error) {
	p, err := w.Policy(ctx)
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = approver.DenyAll()
	}
	return approver.NewGate(w.warnAbout(a), &approver.GateOptions{
		Rules:                p.Rules(),
		NoOperatorAllowRules: p.NoOperatorAllowRules,
		AskReadOnly:          p.AskReadOnly,
		Save:                 w.OperatorRules().Save,
	})
}

// CheckInside refuses a workspace config file (.basis/rules.json,
// .basis/sandbox.json, a .mcp.json to trust) whose real path lies outside
// the workspace, with a *[configfile.OutsideError] naming the link; nil
// when it lies inside or does not exist (declared refuses its own files
// the same way). A repository's configuration is its own: one that links
// to another's would borrow what was decided about that other file.
func (w *Workspace) CheckInside(path string) error {
	_, err := configfile.Inside(w.root, path)
	var outside *configfile.OutsideError
	if errors.As(err, &outside) {
		return outside
	}
	return nil
}

// AllowCommand is the advice a denial gives when nobody could be asked
// (basis call without a terminal, an MCP client that cannot show a form):
// the basis rules add commands an "always" answer would save (the gate's
// proposal, bound to the tool's source). Allowing spawn as a whole would
// allow every command, so for a command line that could not be analysed
// it names the form of a command rule. A server's resource reads and
// prompt gets (tool mcp__<server>, ADR 0016) have none: basis rules add
// cannot look them up, and an "always" answer saves their rule.
func AllowCommand(req approver.Request) string {
	server, mcp := strings.CutPrefix(req.Tool, contract.MCPPrefix)
	switch {
	case mcp && !strings.Contains(server, "__"):
		return ""
	case len(req.Proposed) > 0:
		adds := make([]string, len(req.Proposed))
		for i, r := range req.Proposed {
			adds[i] = r.AddCommand()
		}
		return strings.Join(adds, " && ")
	case contract.IsSpawnName(req.Tool):
		return "basis rules add --tool spawn --source builtin --command 'WORDS *' --allow"
	}
	return approver.Rule{Tool: req.Tool, Source: req.Source, Decision: approver.RuleAllow}.AddCommand()
}
