//go:build unix

package approver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/basis-go/basis/configfile"
)

// ruleError is one problem with a rule: at a position in a file when
// known, naming the rule by its place in the list and its tool.
func ruleError(file string, line, col, index int, tool, problem string) *configfile.Error {
	return &configfile.Error{File: file, Line: line, Column: col, Subject: ruleSubject(index, tool), Err: errors.New(problem)}
}

// ruleSubject is "rule N (tool NAME)", leaving out what is not known.
func ruleSubject(index int, tool string) string {
	var b strings.Builder
	if index > 0 {
		fmt.Fprintf(&b, "rule %d", index)
	} else if tool != "" {
		b.WriteString("rule")
	}
	if tool != "" {
		fmt.Fprintf(&b, " (tool %s)", tool)
	}
	return b.String()
}

// renumber names err's rule by its place in a list, index.
func renumber(err error, index int, tool string) error {
	var ce *configfile.Error
	if errors.As(err, &ce) {
		ce.Subject = ruleSubject(index, tool)
	}
	return err
}

// panicError is the error a [Verdict] carries when the approver panicked.
type panicError struct {
	// Value is what the approver panicked with.
	Value any
	// Stack is the approver goroutine's stack at the panic.
	Stack []byte
}

// Error names the panic value; the stack is for logs.
func (e *panicError) Error() string { return fmt.Sprintf("the approver panicked: %v", e.Value) }

var (
	errInvalidAnswer = errors.New("the approver's answer is not a decision")
	errNoApprover    = errors.New("no approver is configured to ask")
	errNoSave        = errors.New("no place to save the answer as a rule")
)
