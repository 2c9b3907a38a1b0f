package approver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
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

// LoadRules reads the rules file at path and marks every rule with scope. A
// missing file is no rules (nil, nil); a file that exists and cannot be
// used is an error — never fewer rules. Errors about the content are
// *[RulesError] values naming path.
func LoadRules(path string, scope Scope) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	rules, err := ParseRules(data)
	if err != nil {
		var re *RulesError
		if errors.As(err, &re) {
			re.File = path
		}
		return nil, err
	}
	for i := range rules {
		rules[i].Scope = scope
	}
	return rules, nil
}

// LoadWorkspaceRules reads a workspace's rules file (normally
// <root>/.basis/rules.json) with [ScopeWorkspace]. It may hold deny rules
// only: an allow rule is an error wrapping [ErrWorkspaceAllow] that names
// the file, the rule's position and its tool, because a repository that
// could allow its own tools could approve whatever it ships.
func LoadWorkspaceRules(path string) ([]Rule, error) {
	rules, err := LoadRules(path, ScopeWorkspace)
	if err != nil {
		return nil, err
	}
	for i, r := range rules {
		if r.Allow {
			return nil, &RulesError{File: path, Index: i + 1, Tool: r.Tool, Problem: workspaceAllowProblem, Err: ErrWorkspaceAllow}
		}
	}
	return rules, nil
}

// RulesFile is the operator's rules file, <config dir>/rules.json, which
// basis adds rules to and removes them from. Changes are safe against other
// basis processes changing the file at the same time: each holds an
// exclusive lock on a sibling lock file (Path + ".lock") while it reads the
// file afresh, changes it and replaces it by an atomic rename, so no
// change is lost and no reader ever sees a half-written file.
type RulesFile struct {
	// Path is the rules file.
	Path string
}

// List returns the file's rules with [ScopeOperator]; a missing file has
// none.
func (f *RulesFile) List() ([]Rule, error) { return LoadRules(f.Path, ScopeOperator) }

// Add appends r to the file, creating the file and its directory when
// needed. A rule the file already holds (same tool, match and answer) is
// not added twice. r's Scope is not stored.
func (f *RulesFile) Add(r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Subject != "" {
		return &RulesError{Tool: r.Tool, Problem: "matches one exact subject, which only a session can remember; write a pattern instead", Err: ErrInvalidRules}
	}
	return f.update(func(rules []Rule) ([]Rule, bool) {
		for _, have := range rules {
			if sameRule(have, r) {
				return rules, false
			}
		}
		return append(rules, r), true
	})
}

// Remove deletes every rule for which match returns true, given its
// position (from 0) and the rule, and returns how many it deleted. The file
// is rewritten only when something was deleted.
func (f *RulesFile) Remove(match func(i int, r Rule) bool) (removed int, err error) {
	err = f.update(func(rules []Rule) ([]Rule, bool) {
		kept := rules[:0:0]
		for i, r := range rules {
			if match(i, r) {
				removed++
				continue
			}
			kept = append(kept, r)
		}
		return kept, removed > 0
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

func sameRule(a, b Rule) bool {
	return a.Tool == b.Tool && a.Pattern == b.Pattern && slices.Equal(a.Command, b.Command) &&
		a.Allow == b.Allow && a.Reason == b.Reason
}

// update runs change on the file's current rules under the lock and writes
// the result when change reports a difference.
func (f *RulesFile) update(change func([]Rule) ([]Rule, bool)) error {
	if f.Path == "" {
		return errors.New("approver: RulesFile.Path is empty")
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("rules file %s: creating its directory: %w", f.Path, err)
	}
	unlock, err := lockFile(f.Path + ".lock")
	if err != nil {
		return fmt.Errorf("rules file %s: %w", f.Path, err)
	}
	defer unlock()
	rules, err := f.List()
	if err != nil {
		return err
	}
	rules, changed := change(rules)
	if !changed {
		return nil
	}
	data, err := FormatRules(rules)
	if err != nil {
		return err
	}
	if err := writeAtomic(f.Path, data); err != nil {
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

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over path, then the directory synced, so
// a crash leaves the old file or the new one, never a mixture.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: the rename is already visible
		d.Close()
	}
	return nil
}
