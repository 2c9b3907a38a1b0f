//go:build unix

package approver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/basis-go/basis/contract"
)

// ExampleError says that one of a rule's examples disagrees with it: a
// "match" example the rule does not match, a "not_match" example it does,
// or an example that cannot be read. It wraps [ErrInvalidRules]. Its
// message names the example by its key and position, not by its text; the
// text is in Example for a caller that typed it (basis rules add --match).
type ExampleError struct {
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
func (e *ExampleError) Error() string {
	key := "match"
	if e.NotMatch {
		key = "not_match"
	}
	return fmt.Sprintf("%q example %d %s", key, e.Index, e.Problem)
}

// Unwrap returns ErrInvalidRules.
func (e *ExampleError) Unwrap() error { return ErrInvalidRules }

func (e *ExampleError) which() int {
	if e.NotMatch {
		return 1
	}
	return 0
}

// CheckExamples reports whether r agrees with its own examples: every
// Match example must match the rule and no NotMatch example may. For a
// command rule an example is one command line, split like shell words
// ([SplitCommandLine]); for a pattern rule it is a Subject as JSON,
// compared in canonical form. Bare and exact-subject rules take no
// examples. The error is a *[RulesError] naming the rule and the first
// example that disagrees, wrapping an *[ExampleError].
func (r Rule) CheckExamples() error {
	if errs := r.exampleErrors(); len(errs) > 0 {
		return &RulesError{Tool: r.validTool(), Problem: errs[0].Error(), Err: errs[0]}
	}
	return nil
}

// exampleErrors checks every example.
func (r *Rule) exampleErrors() []*ExampleError {
	if len(r.Match) == 0 && len(r.NotMatch) == 0 {
		return nil
	}
	var match func(example string) (bool, error)
	switch r.kind() {
	case kindCommand:
		cmd := compileCommand(r.Command)
		match = func(example string) (bool, error) {
			argv, err := SplitCommandLine(example)
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
		return []*ExampleError{{NotMatch: len(r.Match) == 0, Index: 1, Problem: "cannot be checked: examples go with a command or pattern rule, and this rule matches every call of its tool"}}
	}
	var out []*ExampleError
	for i, ex := range r.Match {
		ok, err := match(ex)
		switch {
		case err != nil:
			out = append(out, &ExampleError{Index: i + 1, Example: ex, Problem: "cannot be read: " + readProblem(err)})
		case !ok:
			out = append(out, &ExampleError{Index: i + 1, Example: ex, Problem: "does not match the rule"})
		}
	}
	for i, ex := range r.NotMatch {
		ok, err := match(ex)
		switch {
		case err != nil:
			out = append(out, &ExampleError{NotMatch: true, Index: i + 1, Example: ex, Problem: "cannot be read: " + readProblem(err)})
		case ok:
			out = append(out, &ExampleError{NotMatch: true, Index: i + 1, Example: ex, Problem: "matches the rule"})
		}
	}
	return out
}

// readProblem drops the sentinel's words from a splitting error.
func readProblem(err error) string {
	msg := err.Error()
	if p := ErrCommandSyntax.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}
