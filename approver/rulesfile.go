//go:build unix

package approver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// Rules files' names, relative to the directory that holds them.
const (
	OperatorRulesFile  = "rules.json"        // in basis's config directory
	WorkspaceRulesFile = ".basis/rules.json" // in a workspace's root
)

// Rules is what a rules file says.
type Rules struct {
	// Rules are the file's rules in order, with scope, file and number.
	Rules []Rule
	// Warnings are rules that load but can never match.
	Warnings []Warning
	// NoOperatorAllowRules: the system file turns operator allow rules
	// off; pass it on as [GateOptions.NoOperatorAllowRules].
	NoOperatorAllowRules bool
	// AskReadOnly: the file says "ask_read_only": true, so calls whose
	// side effect is none are judged by the rules and asked about like
	// any other; pass it on as [GateOptions.AskReadOnly].
	AskReadOnly bool
}

// LoadRules reads the rules file at path as the given layer's: a workspace
// file may only deny and ask; an operator file others can write may not
// allow; a system file others can write is refused. A missing file is no
// rules. Every problem is a *[configfile.Error], joined; the file is read
// with [configfile.Read] (no FIFO, device or oversized file). The format
// is in docs/rules.md.
func LoadRules(ctx context.Context, path string, scope Scope) (*Rules, error) {
	scope = scope.or()
	if scope == ScopeSession || !slices.Contains(scopes, scope) {
		return nil, fmt.Errorf("approver: LoadRules: rules of scope %q are not read from a file", scope)
	}
	data, info, err := configfile.ReadInfo(ctx, path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &Rules{}, nil
	}
	if err != nil {
		return nil, fileReadError(path, err)
	}
	if scope == ScopeSystem {
		// The mode checked is the one of the file read, found on its open
		// descriptor: a stat of the path now could see another file.
		if perm := info.Mode().Perm(); perm&0o022 != 0 {
			return nil, &configfile.Error{File: path, Err: fmt.Errorf(
				"the system rules file can be written by its group or by others (mode %04o), so it is refused: it speaks for every user of this machine; fix it with: chmod go-w %s",
				perm, shellQuote(targetOf(path)))}
		}
	}
	f, problems := parseRules(data, scope)
	if len(problems) > 0 {
		for _, p := range problems {
			p.File = path
		}
		return nil, joinProblems(problems)
	}
	rules := f.rules
	for i := range rules {
		rules[i].File = path
	}
	if scope == ScopeOperator {
		if err := checkLooseMode(path, info.Mode(), rules); err != nil {
			return nil, err
		}
	}
	return &Rules{Rules: rules, Warnings: unboundWarnings(rules), NoOperatorAllowRules: !f.operatorAllows, AskReadOnly: f.askReadOnly}, nil
}

// targetOf is the file a chmod must change: path's target.
func targetOf(path string) string {
	if target, _ := configfile.Target(path); target != "" {
		return target
	}
	return path
}

// fileReadError names the file once, whatever the error says.
func fileReadError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), path+": ")
	return &configfile.Error{File: path, Err: &readError{msg: msg, err: err}}
}

type readError struct {
	msg string
	err error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.err }

// checkLoose refuses allow rules from a file its group or others can
// write, as ssh refuses a loose authorized_keys.
func checkLoose(path string, rules []Rule) error {
	if !slices.ContainsFunc(rules, func(r Rule) bool { return r.Decision == RuleAllow }) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fileReadError(path, err)
	}
	return checkLooseMode(path, info.Mode(), rules)
}

// checkLooseMode is checkLoose for a file whose mode is known.
func checkLooseMode(path string, mode fs.FileMode, rules []Rule) error {
	if !slices.ContainsFunc(rules, func(r Rule) bool { return r.Decision == RuleAllow }) {
		return nil
	}
	if perm := mode.Perm(); perm&0o022 != 0 {
		return &configfile.Error{File: path, Err: fmt.Errorf(
			"the file can be written by its group or by others (mode %04o), so its allow rules are refused: whoever can write it could approve any tool; fix it with: chmod go-w %s",
			perm, shellQuote(targetOf(path)))}
	}
	return nil
}

// Warning is a rule that loads but can never match, and how to fix it.
type Warning struct {
	// Rule is the rule, with its File and Number.
	Rule Rule
	// Problem says why it never matches.
	Problem string
	// Fix is the command that replaces it with one that does.
	Fix string
}

// String reads "PATH: rule N (RULE): PROBLEM; to rebind it: FIX".
func (w Warning) String() string {
	return fmt.Sprintf("%s: rule %d (%s): %s; to rebind it: %s", w.Rule.File, w.Rule.Number, w.Rule.what(), w.Problem, w.Fix)
}

// unboundWarnings reports the allow rules that match nothing, outside a
// workspace: those bound to no source, and those that record no
// definition of the tool they approved, each with the command that
// rebinds it.
func unboundWarnings(rules []Rule) []Warning {
	var out []Warning
	for _, r := range rules {
		if r.Decision != RuleAllow || r.Scope == ScopeWorkspace || r.Scope == ScopeSession {
			continue
		}
		bound := r
		bound.Match, bound.NotMatch, bound.Definition = nil, nil, nil
		switch {
		case !r.bound():
			if contract.IsSpawnName(r.Tool) {
				bound.Source = BuiltinSource
			}
			out = append(out, Warning{
				Rule:    r,
				Problem: `it has no "source", so it is bound to nothing and matches nothing (it was written before rules were bound to the tool they were written for)`,
				Fix:     fmt.Sprintf("%s && basis rules remove %d", bound.AddCommand(), r.Number),
			})
		case len(r.Definition) == 0:
			out = append(out, Warning{
				Rule: r,
				Problem: `it records no "definition" of the tool it allows, so it matches no declared, MCP or spawn tool ` +
					`(it was written before an approval covered what the tool runs); look at the tool as it is now (basis explain ` + shellQuote(r.Tool) + `) before you allow it again`,
				Fix: rebindCommand(bound),
			})
		}
	}
	return out
}

// rebindCommand is the command that records the tool's definition as it
// is now in the rule: rules add, run in the workspace that declares the
// tool (rules add replaces the rule that records none where it stands).
func rebindCommand(r Rule) string {
	add := r.AddCommand()
	if dir := workspaceOf(r.Source); dir != "" {
		return "basis -C " + shellQuote(dir) + strings.TrimPrefix(add, "basis")
	}
	return add
}

// workspaceOf is the workspace root a source lies in, when the source is
// a workspace's own file (<root>/.basis/tools.json or <root>/.mcp.json),
// or "" for builtin, any source and the operator's own files.
func workspaceOf(source string) string {
	if !filepath.IsAbs(source) {
		return ""
	}
	dir, base := filepath.Split(source)
	dir = filepath.Clean(dir)
	switch {
	case base == ".mcp.json":
		return dir
	case base == "tools.json" && filepath.Base(dir) == ".basis":
		return filepath.Dir(dir)
	}
	return ""
}

// RulesFile is the operator's rules file, which basis adds rules to and
// removes them from. Each change holds a lock beside the file and replaces
// it atomically ([configfile.WriteAtomic]), so concurrent processes lose no
// change and no reader sees half a file.
type RulesFile struct {
	// Path is the rules file.
	Path string
}

// Add appends r to the file, creating it when needed; added is false when
// the file already holds r. An allow rule that records no definition is
// replaced in place by r for the same calls.
func (f *RulesFile) Add(r Rule) (added bool, err error) {
	if err := r.Validate(); err != nil {
		return false, err
	}
	if r.Subject != "" {
		return false, ruleError("", 0, 0, 0, r.Tool, "matches one exact subject, which only a session can remember; write a pattern instead")
	}
	if r.Definition != nil {
		if r.Definition, err = canonicalDefinition(r.Definition); err != nil {
			return false, ruleError("", 0, 0, 0, r.Tool, err.Error())
		}
	}
	err = f.update(func(rules []Rule) ([]Rule, bool) {
		for i, have := range rules {
			if !sameRule(have, r) {
				continue
			}
			if sameDefinition(have.Definition, r.Definition) {
				return rules, false
			}
			if len(have.Definition) == 0 && r.Decision == RuleAllow {
				// An approval made before rules recorded definitions
				// is rebound where it stands: its number does not
				// change.
				r.Number = have.Number
				rules[i] = r
				added = true
				return rules, true
			}
		}
		added = true
		return append(rules, r), true
	})
	return added, err
}

// sameDefinition reports whether a and b are the same definition, or
// both none.
func sameDefinition(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == 0 && len(b) == 0
	}
	return definitionDigest(a) == definitionDigest(b)
}

// Save adds r as [RulesFile.Add] does and returns the file's path: the
// shape [GateOptions.Save] takes.
func (f *RulesFile) Save(r Rule) (where string, err error) {
	if _, err := f.Add(r); err != nil {
		return "", err
	}
	return f.Path, nil
}

// Remove deletes and returns every rule for which match, given the rule's
// number (from 1) and the rule, returns true.
func (f *RulesFile) Remove(match func(number int, r Rule) bool) (removed []Rule, err error) {
	err = f.update(func(rules []Rule) ([]Rule, bool) {
		kept := rules[:0:0]
		for _, r := range rules {
			if match(r.Number, r) {
				removed = append(removed, r)
				continue
			}
			kept = append(kept, r)
		}
		return kept, len(removed) > 0
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// sameRule reports whether a and b match the same calls with the same
// answer; reasons and examples aside.
func sameRule(a, b Rule) bool {
	return a.Tool == b.Tool && a.Source == b.Source && a.Pattern == b.Pattern &&
		slices.EqualFunc(a.Command, b.Command, func(x, y CommandWord) bool { return slices.Equal(x, y) }) &&
		a.Decision == b.Decision
}

// update runs change on the file's current rules under the lock and writes
// the result when change reports a difference.
func (f *RulesFile) update(change func([]Rule) ([]Rule, bool)) error {
	if f.Path == "" {
		return errors.New("approver: RulesFile.Path is empty")
	}
	target, err := configfile.Target(f.Path)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", f.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("rules file %s: creating its directory: %w", f.Path, err)
	}
	unlock, err := lockFile(target + ".lock")
	if err != nil {
		return fmt.Errorf("rules file %s: %w", f.Path, err)
	}
	defer unlock()
	file, err := LoadRules(context.Background(), f.Path, ScopeOperator)
	if err != nil {
		return err
	}
	rules := file.Rules
	rules, changed := change(rules)
	if !changed {
		return nil
	}
	if err := checkLoose(f.Path, rules); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data, err := formatRules(rules, file.AskReadOnly)
	if err != nil {
		return err
	}
	if err := configfile.WriteAtomic(f.Path, data, 0o600); err != nil {
		return fmt.Errorf("rules file %s: %w", f.Path, err)
	}
	return nil
}

// lockFile takes an exclusive flock on path, creating it, and returns the
// function that releases it. flock is per open file, so goroutines of one
// process exclude each other as separate processes do.
func lockFile(path string) (unlock func(), err error) {
	lf, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	raw, err := lf.SyscallConn()
	if err == nil {
		ctlErr := raw.Control(func(fd uintptr) {
			for {
				err = syscall.Flock(int(fd), syscall.LOCK_EX)
				if err != syscall.EINTR {
					return
				}
			}
		})
		if err == nil {
			err = ctlErr
		}
	}
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("locking the lock file: %w", err)
	}
	// Closing the file releases the lock.
	return func() { lf.Close() }, nil
}
