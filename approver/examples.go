//go:build unix

package approver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// exampleError says that one of a rule's examples disagrees with it: a
// "match" example the rule does not match, a "not_match" example it does,
// or an example that cannot be read. Its message names the example by its
// key and position, not by its text.
type exampleError struct {
	// NotMatch: the example is from "not_match"; otherwise "match".
	NotMatch bool
	// Index is the example's position in its list, counting from 1.
	Index int
	// Example is the example itself.
	Example string
	// Problem says what is wrong.
	Problem string
}

// Error reads `"match" example 2 does not match the rule`.
func (e *exampleError) Error() string {
	key := "match"
	if e.NotMatch {
		key = "not_match"
	}
	return fmt.Sprintf("%q example %d %s", key, e.Index, e.Problem)
}

func (e *exampleError) which() int {
	if e.NotMatch {
		return 1
	}
	return 0
}

// CheckExamples reports, as a *[configfile.Error], the first of r's
// examples that disagrees with it: a Match example it does not match, or a
// NotMatch example it does. An example is a command line for a command
// rule, Subject JSON for a pattern rule.
func (r Rule) CheckExamples() error {
	if errs := r.exampleErrors(); len(errs) > 0 {
		return &configfile.Error{Subject: ruleSubject(0, r.validTool()), Err: errs[0]}
	}
	return nil
}

// exampleErrors checks every example.
func (r *Rule) exampleErrors() []*exampleError {
	if len(r.Match) == 0 && len(r.NotMatch) == 0 {
		return nil
	}
	var match func(example string) (bool, error)
	switch r.kind() {
	case kindCommand:
		cmd := compileCommand(r.Command)
		match = func(example string) (bool, error) {
			argv, err := splitCommandLine(example)
			if err != nil {
				return false, err
			}
			if len(argv) == 0 {
				return false, errors.New("is empty")
			}
			return cmd.match(argv), nil
		}
	case kindPattern:
		g := compileGlob(r.Pattern)
		match = func(example string) (bool, error) {
			canon, err := contract.CanonicalJSON(json.RawMessage(example))
			if err != nil {
				return false, errors.New("is not JSON; a pattern rule's examples are subjects")
			}
			return g.match(string(canon)), nil
		}
	default:
		return []*exampleError{{NotMatch: len(r.Match) == 0, Index: 1, Problem: "cannot be checked: examples go with a command or pattern rule, and this rule matches every call of its tool"}}
	}
	var out []*exampleError
	for i, ex := range r.Match {
		ok, err := match(ex)
		switch {
		case err != nil:
			out = append(out, &exampleError{Index: i + 1, Example: ex, Problem: "cannot be read: " + readProblem(err)})
		case !ok:
			out = append(out, &exampleError{Index: i + 1, Example: ex, Problem: "does not match the rule"})
		}
	}
	for i, ex := range r.NotMatch {
		ok, err := match(ex)
		switch {
		case err != nil:
			out = append(out, &exampleError{NotMatch: true, Index: i + 1, Example: ex, Problem: "cannot be read: " + readProblem(err)})
		case ok:
			out = append(out, &exampleError{NotMatch: true, Index: i + 1, Example: ex, Problem: "matches the rule"})
		}
	}
	return out
}

// readProblem drops the sentinel's words from a splitting error.
func readProblem(err error) string {
	msg := err.Error()
	if p := errCommandSyntax.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}
