//go:build unix

package subprocess

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// Kind says how a run ended, in the words audit records and messages use.
type Kind string

const (
	// Exited: the program exited on its own; [Outcome.Code] holds the code.
	Exited Kind = "exited"
	// Signaled: the program was killed by a signal nobody in this package
	// sent (a crash, an outside kill, SIGPIPE after the stdout limit);
	// [Outcome.Signal] holds it.
	Signaled Kind = "signaled"
	// TimedOut: the deadline passed and the program was stopped.
	TimedOut Kind = "timed out"
	// Canceled: the caller's context was cancelled and the program was
	// stopped.
	Canceled Kind = "canceled"
	// StartFailed: the program never ran; [Outcome.Err] says why.
	StartFailed Kind = "start failed"
)

// String returns the kind in words ("exited", "timed out"); "unknown" for
// the zero value.
func (k Kind) String() string {
	if k == "" {
		return "unknown"
	}
	return string(k)
}

// Outcome is how one run ended.
type Outcome struct {
	Kind Kind
	// Code is the exit code when the program exited: always for Exited, and
	// for TimedOut or Canceled when the program exited after being asked to
	// stop.
	Code int
	// Signal is the signal that ended the program: always for Signaled, and
	// for TimedOut or Canceled when the program died of the SIGTERM or
	// SIGKILL sent to stop it.
	Signal syscall.Signal
	// Err is why the program could not start (Kind StartFailed): a
	// *[StartError].
	Err error
}

// Success reports whether the program exited with code 0.
func (o Outcome) Success() bool { return o.Kind == Exited && o.Code == 0 }

// String says how the run ended in words: "exited with code 3", "killed by
// signal SIGSEGV", "timed out and was stopped", "was cancelled and
// stopped", "could not start: ...". It is total: an Outcome built by hand
// (StartFailed with no Err, a Kind out of range, the zero value) still
// gets words, never a panic, since its text is often built where a panic
// would take down the whole process.
func (o Outcome) String() string {
	switch o.Kind {
	case Exited:
		return fmt.Sprintf("exited with code %d", o.Code)
	case Signaled:
		// SignalName says "signal 77" for a signal it has no name for.
		if name := SignalName(o.Signal); strings.HasPrefix(name, "SIG") {
			return "killed by signal " + name
		}
		return "killed by " + SignalName(o.Signal)
	case TimedOut:
		return "timed out and was stopped"
	case Canceled:
		return "was cancelled and stopped"
	case StartFailed:
		if o.Err == nil {
			return "could not start"
		}
		return "could not start: " + o.Err.Error()
	}
	return "ended in an unknown way (" + o.Kind.String() + ")"
}

// ExitError reports a run that did not exit with code 0. [Result.Err]
// returns it; bindings wrap it so a host can recover the outcome with
// [errors.As] without parsing text.
type ExitError struct {
	Outcome Outcome
}

// Error says how the run ended; see [Outcome.String].
func (e *ExitError) Error() string { return e.Outcome.String() }

// Unwrap returns the start error, if the program could not start.
func (e *ExitError) Unwrap() error { return e.Outcome.Err }

// Reasons a program could not start, for [errors.Is]. Operating-system
// reasons arrive as [syscall.Errno] values, so errors.Is(err,
// fs.ErrNotExist) and errors.Is(err, fs.ErrPermission) also work.
var (
	// ErrNotFound: a bare program name is in no directory of PATH.
	ErrNotFound = errors.New("not found in PATH")
	// ErrBadInterpreter: the program exists but the interpreter its #! line
	// names does not.
	ErrBadInterpreter = errors.New("the interpreter its #! line names was not found")
)

// StartError says why a program could not start. It never holds the
// program's path, which may carry a credential; the caller knows the path
// it passed.
type StartError struct {
	// Op is the step that failed: "look up program", "start program",
	// "enter working directory" or "confine program".
	Op string
	// Err is the reason: an [syscall.Errno], [ErrNotFound],
	// [ErrBadInterpreter], or what [Cmd.Confine] returned.
	Err error
}

// Error names the step and the reason. Like [Outcome.String] it is total:
// a StartError with no Err names only the step.
func (e *StartError) Error() string {
	if e.Err == nil {
		return e.Op + " failed"
	}
	return e.Op + ": " + e.Err.Error()
}

// Unwrap returns the reason.
func (e *StartError) Unwrap() error { return e.Err }

// Result is what one run produced.
type Result struct {
	Outcome Outcome
	// Stdout and Stderr hold the captured output, at most the configured
	// limits.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that the program wrote more
	// than the limit, the rest not kept; or that a process that escaped
	// the run still held the stream open when reading it ended, so what it
	// wrote afterwards is missing.
	StdoutTruncated, StderrTruncated bool
	// Duration is the wall time from start to the end of draining.
	Duration time.Duration
}

// Err returns nil when the program exited with code 0 and an *[ExitError]
// otherwise.
func (r *Result) Err() error {
	if r.Outcome.Success() {
		return nil
	}
	return &ExitError{Outcome: r.Outcome}
}

// SignalName returns the conventional name of sig, such as "SIGKILL".
func SignalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGCHLD: "SIGCHLD",
	syscall.SIGCONT: "SIGCONT",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGSTOP: "SIGSTOP",
	syscall.SIGSYS:  "SIGSYS",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGTSTP: "SIGTSTP",
	syscall.SIGTTIN: "SIGTTIN",
	syscall.SIGTTOU: "SIGTTOU",
	syscall.SIGURG:  "SIGURG",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}
