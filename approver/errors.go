//go:build unix

package approver

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalidRules is wrapped by every error about a rule or a rules
	// file that cannot be used.
	ErrInvalidRules = errors.New("invalid rules")
	// ErrWorkspaceAllow is wrapped by the error for an allow rule in a
	// workspace's rules file: a repository may deny its own tools, or ask
	// about them, but never pre-approve them. It also wraps ErrInvalidRules.
	ErrWorkspaceAllow = fmt.Errorf("%w: a workspace rules file may only deny or ask", ErrInvalidRules)
)

// RulesError says why a rule or a rules file cannot be used. Its message
// names the file, the rule's position and tool, and the key at fault, and
// never quotes a value from the file.
type RulesError struct {
	// File is the rules file, or "" for rules that came from elsewhere.
	File string
	// Line and Col are where in the file the problem is, counting from 1,
	// the column in characters; 0 when not known.
	Line, Col int
	// Index is the rule's position in the file's list, counting from 1;
	// 0 when the problem is with the file as a whole.
	Index int
	// Tool is the rule's tool, when it is a valid tool name.
	Tool string
	// Problem says what is wrong and what to write instead.
	Problem string
	// Err is ErrInvalidRules or ErrWorkspaceAllow.
	Err error
}

// Error reads "PATH:LINE:COL: rule N (tool NAME): PROBLEM", leaving out
// the parts that are not known ("rules file PATH: ..." without a position,
// "line L, column C: ..." without a file).
func (e *RulesError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Col)
	case e.File != "":
		b.WriteString("rules file ")
		b.WriteString(e.File)
		b.WriteString(": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Col)
	}
	if e.Index > 0 {
		fmt.Fprintf(&b, "rule %d", e.Index)
	} else if e.Tool != "" {
		b.WriteString("rule")
	}
	if e.Tool != "" {
		fmt.Fprintf(&b, " (tool %s)", e.Tool)
	}
	if e.Index > 0 || e.Tool != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Unwrap returns Err.
func (e *RulesError) Unwrap() error { return e.Err }

// ErrNoTerminal is returned by [Terminal] when there is no terminal to ask
// at: none was given, /dev/tty cannot be opened, or what was given is not a
// terminal. Nothing is printed anywhere in that case.
var ErrNoTerminal = errors.New("no terminal to ask at")

// PanicError is the error a [Verdict] carries when the approver panicked.
// The panic is recovered; the call is denied.
type PanicError struct {
	// Value is what the approver panicked with.
	Value any
	// Stack is the approver goroutine's stack at the panic.
	Stack []byte
}

// Error names the panic value; the stack is for logs.
func (e *PanicError) Error() string { return fmt.Sprintf("the approver panicked: %v", e.Value) }

// ErrInvalidAnswer is wrapped by the error a [Verdict] carries when the
// approver returned something that is not an answer: no decision, or a
// Remember that cannot be remembered.
var ErrInvalidAnswer = errors.New("the approver's answer is not a decision")

// ErrNoApprover is the error a [Verdict] carries when a call reached a gate
// made without an approver.
var ErrNoApprover = errors.New("no approver is configured to ask")

// ErrNoSave is wrapped by [Verdict.SaveErr] when an answer to be kept
// beyond the session could not be saved: the gate has no
// [GateOptions.Save], or the tool has no source to bind a rule to.
var ErrNoSave = errors.New("no place to save the answer as a rule")
