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

// File names, relative to the directory that holds them.
const (
	// OperatorRulesFile is the operator's rules file inside basis's config
	// directory: <config dir>/rules.json.
	OperatorRulesFile = "rules.json"
	// WorkspaceRulesFile is a workspace's rules file, relative to its root.
	// It may hold deny rules only.
	WorkspaceRulesFile = ".basis/rules.json"
)

// LoadRules reads the rules file at path and marks every rule with scope,
// the file and its number. A missing file is no rules (nil, nil, nil); a
// file that exists and cannot be used is an error — never fewer rules.
//
// The file is read with [configfile.Read]: a FIFO, a device (a link to
// /dev/zero), a directory or a file over [configfile.DefaultLimit] is an
// error naming the file, and ctx stops the read. Problems with the content
// are *[RulesError] values naming the file, line and column, all of them
// joined. An operator file that is writable by its group or by others may
// not hold allow rules (anyone who can write it could approve any tool):
// that is an error wrapping [ErrLooseFile] saying how to fix it.
//
// Warnings are rules that load but can never match: allow rules bound to
// no source (written before rules were bound to a tool's source), each with
// the command that rebinds it. Deny and ask rules without a source match
// every source and are not warned about.
func LoadRules(ctx context.Context, path string, scope Scope) ([]Rule, []Warning, error) {
	data, info, err := configfile.ReadInfo(ctx, path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fileReadError(path, err)
	}
	f, problems := parseRulesFile(data, false)
	if len(problems) > 0 {
		for _, p := range problems {
			p.File = path
		}
		return nil, nil, joinProblems(problems)
	}
	rules := f.rules
	for i := range rules {
		rules[i].Scope = scope
		rules[i].File = path
	}
	if scope != ScopeWorkspace {
		// The mode checked is the one of the file read, found on its open
		// descriptor: a stat of the path now could see another file.
		if err := checkLooseMode(path, info.Mode(), rules); err != nil {
			return nil, nil, err
		}
	}
	return rules, unboundWarnings(rules), nil
}

// fileReadError names the file once, whatever the error says.
func fileReadError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), path+": ")
	return &readError{path: path, msg: msg, err: err}
}

type readError struct {
	path, msg string
	err       error
}

func (e *readError) Error() string { return "rules file " + e.path + ": " + e.msg }
func (e *readError) Unwrap() error { return e.err }

// ErrLooseFile is wrapped by the error for an operator rules file that
// anyone but its owner can write and that holds allow rules; it also wraps
// [ErrInvalidRules].
var ErrLooseFile = fmt.Errorf("%w: a rules file others can write may not allow", ErrInvalidRules)

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
		target, _ := configfile.Target(path)
		if target == "" {
			target = path
		}
		return &RulesError{File: path, Problem: fmt.Sprintf(
			"the file can be written by its group or by others (mode %04o), so its allow rules are refused: whoever can write it could approve any tool; fix it with: chmod go-w %s",
			perm, shellQuote(target)), Err: ErrLooseFile}
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

// LoadWorkspaceRules reads a workspace's rules file (normally
// <root>/.basis/rules.json) with [ScopeWorkspace], as [LoadRules] does. It
// may hold deny and ask rules only: an allow rule is an error wrapping
// [ErrWorkspaceAllow] that names the file, the rule's position and its
// tool, because a repository that could allow its own tools could approve
// whatever it ships. Its rules need no source: they speak only for their
// own workspace.
func LoadWorkspaceRules(ctx context.Context, path string) ([]Rule, error) {
	rules, _, err := LoadRules(ctx, path, ScopeWorkspace)
	if err != nil {
		return nil, err
	}
	var problems []*RulesError
	for _, r := range rules {
		if r.Decision == RuleAllow {
			problems = append(problems, &RulesError{File: path, Index: r.Number, Tool: r.Tool, Problem: workspaceAllowProblem, Err: ErrWorkspaceAllow})
		}
	}
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	return rules, nil
}

// RulesFile is the operator's rules file, <config dir>/rules.json, which
// basis adds rules to and removes them from. Changes are safe against other
// basis processes changing the file at the same time: each holds an
// exclusive lock on a sibling lock file (the file's target + ".lock") while
// it reads the file afresh, changes it and replaces it with
// [configfile.WriteAtomic] — through a symlink to its target, keeping the
// target's mode (0600 for a new file) — so no change is lost, no reader
// ever sees a half-written file, and a dotfile kept as a link stays one.
type RulesFile struct {
	// Path is the rules file.
	Path string
}

// List returns the file's rules with [ScopeOperator], numbered as the file
// holds them, and the warnings [LoadRules] gives; a missing file has none.
func (f *RulesFile) List(ctx context.Context) ([]Rule, []Warning, error) {
	return LoadRules(ctx, f.Path, ScopeOperator)
}

// Add appends r to the file, creating the file and its directory when
// needed. A rule the file already holds (same tool, source, match, answer
// and definition) is not added twice: added is false then, and the file
// is not written. An allow rule for the same calls that records another
// definition is a second approval and stays; one that records none (made
// before rules recorded definitions) is replaced where it stands by r.
// r's Scope, File and Number are not stored.
func (f *RulesFile) Add(r Rule) (added bool, err error) {
	if err := r.Validate(); err != nil {
		return false, err
	}
	if r.Subject != "" {
		return false, &RulesError{Tool: r.Tool, Problem: "matches one exact subject, which only a session can remember; write a pattern instead (SubjectPattern makes one)", Err: ErrInvalidRules}
	}
	if r.Definition != nil {
		if r.Definition, err = CanonicalDefinition(r.Definition); err != nil {
			return false, &RulesError{Tool: r.Tool, Problem: err.Error(), Err: ErrInvalidRules}
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
	return DefinitionDigest(a) == DefinitionDigest(b)
}

// Save adds r as [RulesFile.Add] does and returns the file's path: the
// shape [GateOptions.Save] takes, for "always" answers. A rule already
// there counts as saved.
func (f *RulesFile) Save(r Rule) (where string, err error) {
	if _, err := f.Add(r); err != nil {
		return "", err
	}
	return f.Path, nil
}

// Remove deletes every rule for which match returns true, given its
// number (from 1, as [RulesFile.List] numbers it) and the rule, and returns
// the rules it deleted. The file is rewritten only when something was
// deleted.
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

// RuleFilter selects rules to remove. Empty fields match anything, so
// {Tool: "spawn"} selects every rule of spawn — bare, pattern and command
// rules alike.
type RuleFilter struct {
	// Number, when not 0, selects the rule with this number alone (as
	// "basis rules list" shows it); the other fields must then match too.
	Number int
	// Tool, Source and Pattern must equal the rule's when set.
	Tool, Source, Pattern string
	// Command, when set, must equal the rule's word for word.
	Command []CommandWord
	// Decision, when set, must equal the rule's.
	Decision *RuleDecision
}

// Match reports whether r, numbered number, is selected.
func (q RuleFilter) Match(number int, r Rule) bool {
	return (q.Number == 0 || q.Number == number) &&
		(q.Tool == "" || q.Tool == r.Tool) &&
		(q.Source == "" || q.Source == r.Source) &&
		(q.Pattern == "" || q.Pattern == r.Pattern) &&
		(len(q.Command) == 0 || slices.EqualFunc(q.Command, r.Command, func(x, y CommandWord) bool { return slices.Equal(x, y) })) &&
		(q.Decision == nil || *q.Decision == r.Decision)
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
	rules, _, err := f.List(context.Background())
	if err != nil {
		return err
	}
	rules, changed := change(rules)
	if !changed {
		return nil
	}
	if err := checkLoose(f.Path, rules); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data, err := FormatRules(rules)
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
