package approver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// DefaultHookTimeout is how long a [Hook] has to answer when its Timeout is
// zero.
const DefaultHookTimeout = 30 * time.Second

// hookStdoutLimit bounds a hook's answer; a longer one is not an answer.
const hookStdoutLimit = 64 << 10

// Hook asks a program. The program gets the [Request] as JSON on its stdin
// and answers with one JSON object on its stdout:
//
//	{"decision": "allow" | "deny" | "allow_session" | "deny_session",
//	 "reason": "...",            // optional; what the model reads on a denial
//	 "remember": {"tool": true} | {"command": ["go", "test", "*"]}}  // optional, session answers only
//
// Anything else is not an answer: a non-zero exit, death by a signal, a
// program that cannot start, running past the timeout, and output that is
// not exactly such an object (unknown keys included) each make Approve
// return a *[HookError] saying which, and the gate denies. The hook's
// stderr, shortened, is part of that error.
//
// The program runs through [subprocess.Run]: argv only, no shell, in its
// own process group, killed with its children when it runs out of time.
type Hook struct {
	// Argv is the program and its arguments. A path with a directory part
	// is relative to Root; a bare name is looked up in Env's PATH.
	Argv []string
	// Root is the directory the program runs in and relative paths
	// resolve against. Empty means this process's working directory.
	Root string
	// Env is the program's whole environment; nil is an empty one (see
	// [subprocess.Cmd]). Pass os.Environ() to hand on basis's own.
	Env []string
	// Timeout bounds one answer; zero means DefaultHookTimeout.
	Timeout time.Duration
}

// Errors a [HookError] wraps, for [errors.Is].
var (
	// ErrHookExit: the hook exited with a non-zero code or was killed by a
	// signal.
	ErrHookExit = errors.New("the hook did not exit with code 0")
	// ErrHookTimeout: the hook ran past its timeout and was stopped.
	ErrHookTimeout = errors.New("the hook did not answer in time")
	// ErrHookOutput: the hook exited with code 0 but its stdout is not an
	// answer.
	ErrHookOutput = errors.New("the hook's output is not an answer")
)

// HookError says why a hook gave no answer.
type HookError struct {
	// Outcome is how the program ended.
	Outcome subprocess.Outcome
	// Timeout is the limit it had, for the message.
	Timeout time.Duration
	// Problem, for ErrHookOutput, says what is wrong with the output.
	Problem string
	// Stderr is the start of the program's stderr, on one line.
	Stderr string
	// Err is ErrHookExit, ErrHookTimeout, ErrHookOutput, context.Canceled,
	// or the *subprocess.StartError that kept the program from starting.
	Err error
}

// Error says how the hook failed and, when it wrote any, the start of its
// stderr.
func (e *HookError) Error() string {
	var msg string
	switch {
	case errors.Is(e.Err, ErrHookOutput):
		msg = "hook printed no answer: " + e.Problem
	case errors.Is(e.Err, ErrHookTimeout):
		msg = fmt.Sprintf("hook did not answer within %s and was stopped", e.Timeout)
	default:
		msg = "hook " + e.Outcome.String()
	}
	if e.Stderr != "" {
		msg += "; its stderr: " + e.Stderr
	}
	return msg
}

// Unwrap returns Err.
func (e *HookError) Unwrap() error { return e.Err }

// hookAnswer is the hook's stdout.
type hookAnswer struct {
	Decision *Decision `json:"decision"`
	Reason   string    `json:"reason"`
	Remember *Remember `json:"remember"`
}

// Approve runs the hook once. On any failure it returns a *[HookError] and,
// for a caller that looks only at the answer, a Deny whose reason is the
// error's text.
func (h Hook) Approve(ctx context.Context, req Request) (Answer, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	payload, err := req.MarshalJSON()
	if err != nil {
		return denyFor(fmt.Errorf("approver: encoding the request for the hook: %w", err))
	}
	res, err := subprocess.Run(ctx, &subprocess.Cmd{
		Argv:        h.Argv,
		Root:        h.Root,
		Env:         h.Env,
		Stdin:       payload,
		Timeout:     timeout,
		StdoutLimit: hookStdoutLimit,
	})
	if err != nil {
		return denyFor(fmt.Errorf("approver: the hook cannot be run: %w", err))
	}
	herr := &HookError{Outcome: res.Outcome, Timeout: timeout, Stderr: oneLine(string(res.Stderr), maxReasonDetail)}
	switch res.Outcome.Kind {
	case subprocess.Exited:
		if res.Outcome.Code != 0 {
			herr.Err = ErrHookExit
			return denyFor(herr)
		}
	case subprocess.Signaled:
		herr.Err = ErrHookExit
		return denyFor(herr)
	case subprocess.TimedOut:
		herr.Err = ErrHookTimeout
		if ctx.Err() != nil {
			herr.Err = ctx.Err() // the caller's deadline, not the hook's Timeout
		}
		return denyFor(herr)
	case subprocess.Canceled:
		herr.Err = context.Canceled
		return denyFor(herr)
	default:
		herr.Err = res.Outcome.Err
		return denyFor(herr)
	}
	if res.StdoutTruncated {
		herr.Err, herr.Problem = ErrHookOutput, fmt.Sprintf("its output is longer than %d bytes", hookStdoutLimit)
		return denyFor(herr)
	}
	answer, problem := parseHookAnswer(res.Stdout)
	if problem != "" {
		herr.Err, herr.Problem = ErrHookOutput, problem
		return denyFor(herr)
	}
	return answer, nil
}

const hookAnswerShape = `{"decision": "allow", "reason": "..."}`

// parseHookAnswer reads the hook's stdout strictly, or says what is wrong
// with it without quoting it.
func parseHookAnswer(out []byte) (Answer, string) {
	if len(bytes.TrimSpace(out)) == 0 {
		return Answer{}, "its stdout is empty; print " + hookAnswerShape
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var ha hookAnswer
	if err := dec.Decode(&ha); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return Answer{}, "its stdout is not JSON; print " + hookAnswerShape
		case errors.As(err, &typ):
			return Answer{}, fmt.Sprintf("%q has the wrong type; print %s", typ.Field, hookAnswerShape)
		case errors.Is(err, ErrUnknownDecision):
			return Answer{}, `"decision" is not one of allow, deny, allow_session, deny_session`
		}
		// An unknown field, or output that ends early.
		return Answer{}, oneLine(err.Error(), 120) + "; print " + hookAnswerShape
	}
	if dec.More() {
		return Answer{}, "its stdout holds more than one JSON value; print one object"
	}
	if ha.Decision == nil {
		return Answer{}, `"decision" is missing; print ` + hookAnswerShape
	}
	a := Answer{Decision: *ha.Decision, Reason: ha.Reason}
	if ha.Remember != nil {
		if !a.Decision.ForSession() {
			return Answer{}, `"remember" goes only with "allow_session" or "deny_session"`
		}
		if err := ha.Remember.check(); err != nil {
			return Answer{}, `"remember" is not usable: ` + err.Error()
		}
		a.Remember = ha.Remember
	}
	return a, ""
}

func denyFor(err error) (Answer, error) {
	return Answer{Decision: Deny, Reason: err.Error()}, err
}
