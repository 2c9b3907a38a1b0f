package main

import (
	"context"
	"errors"
	"slices"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
)

// policy is every rule a call is judged by, in its layers: the system's
// (/etc/basis/rules.json, which nobody below may loosen), the operator's
// and the workspace's (deny and ask only).
type policy struct {
	system, operator, workspace []approver.Rule
	// noOperatorAllows: the system file says the operator's rules may only
	// deny and ask.
	noOperatorAllows bool
	// warnings are rules that load but can never match, each with the
	// command that fixes it.
	warnings []approver.Warning
}

func (p *policy) rules() []approver.Rule {
	return slices.Concat(p.system, p.operator, p.workspace)
}

// loadPolicy reads the three rules files. Every problem of every file is
// returned, one error each, so check can list them all.
func (w *workspace) loadPolicy(ctx context.Context) (*policy, []error) {
	var p policy
	var errs []error
	sys, err := approver.LoadRules(ctx, w.systemRulesPath(), approver.ScopeSystem)
	if err != nil {
		errs = append(errs, problems(err)...)
	} else {
		p.system, p.noOperatorAllows = sys.Rules, sys.NoOperatorAllowRules
		p.warnings = append(p.warnings, sys.Warnings...)
	}
	operator, warnings, err := listRules(ctx, w.operatorRules())
	if err != nil {
		errs = append(errs, problems(err)...)
	}
	p.operator = operator
	p.warnings = append(p.warnings, warnings...)
	if err := w.outsideWorkspace(w.workspaceRulesPath()); err != nil {
		errs = append(errs, err)
	} else {
		ws, err := approver.LoadRules(ctx, w.workspaceRulesPath(), approver.ScopeWorkspace)
		if err != nil {
			errs = append(errs, problems(err)...)
		} else {
			p.workspace = ws.Rules
		}
	}
	return &p, errs
}

// systemRulesPath is the administrator's rules file; the environment may
// move it (tests do) but never turn it off.
func (w *workspace) systemRulesPath() string {
	if dir := w.e.getenv(approver.SystemConfigDirEnv); dir != "" {
		return absFrom(w.root, dir) + "/" + approver.SystemRulesFile
	}
	return approver.DefaultSystemConfigDir + "/" + approver.SystemRulesFile
}

// newGate builds the gate for one invocation: every layer's rules, and
// "always" answers saved to the operator's rules file.
func (w *workspace) newGate(ctx context.Context, appr approver.Approver) (*approver.Gate, *policy, []error) {
	p, errs := w.loadPolicy(ctx)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	file := w.operatorRules()
	if t, ok := appr.(*terminal.Terminal); ok {
		t.SaveTo = file.Path
	}
	// Whoever is asked sees what the repository's git config makes git
	// run, for a call that runs git.
	appr = w.warnAbout(appr)
	gate, err := approver.NewGate(appr, &approver.GateOptions{
		Rules:                p.rules(),
		NoOperatorAllowRules: p.noOperatorAllows,
		Save:                 file.Save,
	})
	if err != nil {
		return nil, nil, []error{err}
	}
	return gate, p, nil
}

// errNoSuchTool reports a rule for a tool the roster does not have.
var errNoSuchTool = errors.New("no such tool")

// listRules reads the operator's rules file: its rules, numbered, and the
// warnings about those that match nothing.
func listRules(ctx context.Context, f *approver.RulesFile) ([]approver.Rule, []approver.Warning, error) {
	r, err := approver.LoadRules(ctx, f.Path, approver.ScopeOperator)
	if err != nil {
		return nil, nil, err
	}
	return r.Rules, r.Warnings, nil
}
