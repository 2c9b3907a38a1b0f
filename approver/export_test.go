//go:build unix

package approver

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
