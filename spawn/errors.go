//go:build unix

package spawn

import (
	"errors"
	"github.com/basis-go/basis/subprocess"
	"strings"
	"time"

	"github.com/basis-go/basis/contract"
)

// The kinds of refusal and of bad options, for this package's own use (and
// its tests'). A caller tells spawn's errors apart by their types
// ([*InputError], [*Refusal], [*UnanalysableError], [*CommandError]) and
// contract's sentinels: an input error wraps [contract.ErrInvalidInput]
// and a refusal [contract.ErrRefused], whatever tool returned them.
var (
	// errUnknownTarget: a command named a target nothing registered.
	errUnknownTarget = errors.New("unknown target")
	// errCommandsOff: commands are switched off ([Options.NoShell]).
	errCommandsOff = errors.New("commands are switched off")
	// errNoDelegator: a task arrived and there is no [Delegator].
	errNoDelegator = errors.New("no subagent to delegate to")
	// errDepthExceeded: a task arrived at the delegation depth bound.
	errDepthExceeded = errors.New("delegation depth bound reached")
	// errNotConfined: the host's sandbox ([Options.Sandbox]) could not
	// confine a command; the [Refusal]'s Cause is the sandbox's error.
	errNotConfined = errors.New("command cannot be confined")

	// errInvalidOptions: [New] was given [Options] it cannot use.
	errInvalidOptions = errors.New("invalid spawn options")
	// errInvalidTarget: [Options.Targets] holds a name or executor that
	// cannot be registered.
	errInvalidTarget = errors.New("invalid target")
)

// InputError says why a spawn input could not be parsed, and shows the
// form that works. It wraps [contract.ErrInvalidInput].
type InputError struct {
	// Problem is what is wrong with the input.
	Problem string
	// Form is the working form, with an example.
	Form string
}

// Error says what is wrong and shows the working form.
func (e *InputError) Error() string { return "spawn: " + e.Problem + "; write " + e.Form }

// Unwrap returns [contract.ErrInvalidInput].
func (e *InputError) Unwrap() error { return contract.ErrInvalidInput }

func inputError(problem, form string) error { return &InputError{Problem: problem, Form: form} }

// Refusal is a call refused before anything runs: by the preview (so no
// approver is asked) and again by Execute: an unknown target, commands
// switched off, a task with no delegator or at the depth bound, a command
// the sandbox cannot confine. Message is what the model reads, including
// what to do instead.
type Refusal struct {
	reason error // the kind of refusal
	// Message says why, and what to do instead.
	Message string
	// Cause, when not nil, is the error behind the refusal: the
	// sandbox's own when it cannot confine the command.
	Cause error
}

// Error returns the Message, prefixed with the tool's name.
func (r *Refusal) Error() string { return "spawn: " + r.Message }

// Unwrap returns [contract.ErrRefused] and the Cause.
func (r *Refusal) Unwrap() []error {
	out := []error{contract.ErrRefused}
	if r.reason != nil {
		out = append(out, r.reason)
	}
	if r.Cause != nil {
		out = append(out, r.Cause)
	}
	return out
}

// UnanalysableError says why [AnalyzeCommands] cannot list a body's
// commands. Its Reason is what the preview's
// subject carries under "unanalysable".
type UnanalysableError struct {
	// Reason says what was found, as in "a word has a parameter expansion
	// ($NAME)".
	Reason string
}

// Error returns "not analysable: " and the Reason.
func (e *UnanalysableError) Error() string { return "not analysable: " + e.Reason }

func unanalysable(why string) error { return &UnanalysableError{Reason: why} }

// CommandError is a command that ran and did not succeed: it exited
// non-zero, was killed by a signal, timed out, was cancelled, or could not
// start. Its text carries the command's output, as a successful result
// would. A host reads how it ended from End with [errors.As]; it unwraps
// to End.StartErr, so errors.Is(err, fs.ErrNotExist) works for a program
// that could not start.
type CommandError struct {
	// Target is the target the command ran on; "" means here.
	Target string
	// Output is the command's output, labelled as in a successful result.
	Output string
	// Timeout is the limit the command had, for saying so when it passed.
	Timeout time.Duration
	// End is how the command ended.
	End CommandEnd
}

// Error says how the command ended, then carries its output, as the model
// reads it.
func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString("spawn: the command")
	if e.Target != "" {
		b.WriteString(" on target " + e.Target)
	}
	if e.End.how() == endTimedOut && e.Timeout > 0 {
		b.WriteString(" timed out after " + e.Timeout.String() + " and was stopped")
	} else {
		b.WriteString(" " + e.End.String())
	}
	switch {
	case e.Output != "":
		b.WriteString("\n" + e.Output)
	case e.End.how() == endExited || e.End.how() == endSignaled:
		b.WriteString(" and printed nothing")
	}
	return b.String()
}

// Unwrap returns a *subprocess.ExitError describing End, so a host (and
// the runtime's audit) reads the exit status of a spawn command the same
// way as any program's, and End.StartErr when the command could not start.
func (e *CommandError) Unwrap() []error {
	exit := &subprocess.ExitError{Outcome: e.End.outcome()}
	if e.End.StartErr != nil {
		return []error{e.End.StartErr, exit}
	}
	return []error{exit}
}
