//go:build unix

package approver

import (
	"context"
	"errors"
	"strings"

	"github.com/basis-go/basis/configfile"
)

// What the tests in approver_test reach that is not exported.
var (
	ProgramName       = programName
	SubjectPattern    = subjectPattern
	ExactReason       = exactReason
	ProposeCommand    = proposeCommand
	FormatCommandLine = formatCommandLine
	SplitCommandLine  = splitCommandLine
	FormatRules       = formatRules
	DefinitionDigest  = definitionDigest
	ErrCommandSyntax  = errCommandSyntax
	ErrHookOutput     = errHookOutput
	ErrHookExit       = errHookExit
	ErrHookTimeout    = errHookTimeout
	ErrNoSave         = errNoSave
	ErrNoApprover     = errNoApprover
	ErrInvalidAnswer  = errInvalidAnswer
)

type (
	HookError  = hookError
	PanicError = panicError
)

const (
	ExactRunsPrograms = exactRunsPrograms
	ExactDestroys     = exactDestroys
	ExactGit          = exactGit
)

// ParseRules reads rules file data as an operator's file.
func ParseRules(data []byte) ([]Rule, error) {
	f, problems := parseRules(data, ScopeOperator)
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	return f.rules, nil
}

// List is LoadRules of the file as the operator's, in the shape the tests
// were written for.
func (f *RulesFile) List(ctx context.Context) ([]Rule, []Warning, error) {
	r, err := LoadRules(ctx, f.Path, ScopeOperator)
	if err != nil {
		return nil, nil, err
	}
	return r.Rules, r.Warnings, nil
}

// LoadWorkspaceRules is LoadRules of a workspace's file, rules only.
func LoadWorkspaceRules(ctx context.Context, path string) ([]Rule, error) {
	r, err := LoadRules(ctx, path, ScopeWorkspace)
	if err != nil {
		return nil, err
	}
	return r.Rules, nil
}

// LoadRules3 is LoadRules in the shape the tests were written for.
func LoadRules3(ctx context.Context, path string, scope Scope) ([]Rule, []Warning, error) {
	r, err := LoadRules(ctx, path, scope)
	if err != nil {
		return nil, nil, err
	}
	return r.Rules, r.Warnings, nil
}

// IsRulesError reports whether err holds a *configfile.Error about rules.
func IsRulesError(err error) bool {
	var ce *configfile.Error
	return errors.As(err, &ce)
}

// IsLoose reports whether err refuses a file others can write.
func IsLoose(err error) bool {
	return err != nil && strings.Contains(err.Error(), "can be written by its group or by others")
}

// IsWorkspaceAllow reports whether err refuses a workspace's allow rule.
func IsWorkspaceAllow(err error) bool {
	return err != nil && strings.Contains(err.Error(), workspaceAllowProblem)
}

// MatchTool selects the rules of one tool, for RulesFile.Remove.
func MatchTool(tool string) func(int, Rule) bool {
	return func(_ int, r Rule) bool { return r.Tool == tool }
}

// MatchNumber selects the rule numbered n, for RulesFile.Remove.
func MatchNumber(n int) func(int, Rule) bool {
	return func(number int, _ Rule) bool { return number == n }
}
