//go:build unix

package approver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/configfile"
)

// The system layer: rules an administrator sets for every user of a
// machine.
const (
	// DefaultSystemConfigDir is where the system rules file lives.
	DefaultSystemConfigDir = "/etc/basis"
	// SystemConfigDirEnv names the variable that moves it (for tests and
	// unusual installs).
	SystemConfigDirEnv = "BASIS_SYSTEM_CONFIG_DIR"
	// SystemRulesFile is the system rules file's name in that directory.
	SystemRulesFile = "rules.json"
)

// SystemRulesPath returns the system rules file's path:
// $BASIS_SYSTEM_CONFIG_DIR/rules.json, or /etc/basis/rules.json.
func SystemRulesPath() string {
	dir := os.Getenv(SystemConfigDirEnv)
	if dir == "" {
		dir = DefaultSystemConfigDir
	}
	return filepath.Join(dir, SystemRulesFile)
}

// SystemRules is what the system rules file says.
type SystemRules struct {
	// Rules are the file's rules, with [ScopeSystem]. Their deny and ask
	// rules cannot be overridden by any operator, workspace or session
	// rule; their allow rules apply as operator rules do.
	Rules []Rule
	// AllowOperatorAllowRules is false when the file says
	// "allow_operator_allow_rules": false: the operator's rules may then
	// only deny and ask, and every allow comes from the administrator or
	// from an approver's answer. Pass its negation as
	// [GateOptions.NoOperatorAllowRules].
	AllowOperatorAllowRules bool
	// Warnings are allow rules bound to no source, as [LoadRules] gives.
	Warnings []Warning
}

// LoadSystemRules reads the system rules file at path (normally
// [SystemRulesPath]) with the same care as the operator's: a regular file
// after symlinks, size-bounded, honouring ctx. The file may hold, besides
// "schema" and "rules", "allow_operator_allow_rules": true|false. A file
// that its group or others can write is refused whole (an error wrapping
// [ErrLooseFile]): it speaks for every user of the machine. A missing file
// is no rules, with operator allow rules allowed.
func LoadSystemRules(ctx context.Context, path string) (*SystemRules, error) {
	// The mode checked is the one of the file read, found on its open
	// descriptor: a stat of the path now could see another file.
	data, info, err := configfile.ReadInfo(ctx, path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &SystemRules{AllowOperatorAllowRules: true}, nil
	}
	if err != nil {
		return nil, fileReadError(path, err)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		target, _ := configfile.Target(path)
		if target == "" {
			target = path
		}
		return nil, &RulesError{File: path, Problem: fmt.Sprintf(
			"the system rules file can be written by its group or by others (mode %04o), so it is refused: it speaks for every user of this machine; fix it with: chmod go-w %s",
			perm, shellQuote(target)), Err: ErrLooseFile}
	}
	f, problems := parseRulesFile(data, true)
	if len(problems) > 0 {
		for _, p := range problems {
			p.File = path
		}
		return nil, joinProblems(problems)
	}
	for i := range f.rules {
		f.rules[i].Scope = ScopeSystem
		f.rules[i].File = path
	}
	return &SystemRules{Rules: f.rules, AllowOperatorAllowRules: f.operatorAllows, Warnings: unboundWarnings(f.rules)}, nil
}
