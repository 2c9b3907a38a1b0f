//go:build unix

package approver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract/childenv"
	"github.com/basis-go/basis/contract/display"
	"github.com/basis-go/basis/subprocess"
)

// defaultHookTimeout is how long a [Hook] has to answer when its Timeout is
// zero.
const defaultHookTimeout = 30 * time.Second

// hookStdoutLimit bounds a hook's answer; a longer one is not an answer.
const hookStdoutLimit = 64 << 10

// Hook asks a program, run through [subprocess.Run] (argv only, no shell,
// its own process group). The program reads the [Request] as JSON on stdin
// and writes one JSON object on stdout:
//
//	{"decision": "allow"|"deny"|"allow_session"|"deny_session",
//	 "reason"?: TEXT, "remember"?: {"tool": true}|{"command": [...]}|{"proposed": true}}
//
// Anything else — a non-zero exit, a signal, a missed timeout, any other
// output — is an error, and the gate denies. The protocol is in
// docs/rules.md.
type Hook struct {
	// Argv is the program and its arguments. A path with a directory part
	// is relative to Root; a bare name is looked up in Env's PATH.
	Argv []string
	// Root is the directory the program runs in. Empty: this process's.
	Root string
	// Env is what the program inherits, less basis's BASIS_* variables (a
	// hook holding BASIS_SERVE_TOKEN could approve around itself) and
	// credential-looking names PassEnv does not name (contract/childenv).
	// Nil is an empty environment.
	Env []string
	// PassEnv names credential-looking variables of Env to pass all the
	// same: names, or patterns with *.
	PassEnv []string
	// Timeout bounds one answer; zero means 30 seconds.
	Timeout time.Duration
}

// What a [hookError] wraps.
var (
	errHookExit    = errors.New("the hook did not exit with code 0")
	errHookTimeout = errors.New("the hook did not answer in time")
	errHookOutput  = errors.New("the hook's output is not an answer")
)

// hookError says why a hook gave no answer.
type hookError struct {
	// Outcome is how the program ended.
	Outcome subprocess.Outcome
	// Timeout is the limit it had, for the message.
	Timeout time.Duration
	// Problem, when the hook exited with code 0, says what is wrong with
	// its output.
	Problem string
	// Stderr is the start of the program's stderr, on one line.
	Stderr string
	// Program is the hook's program as the operator named it (Argv[0]),
	// for a hook that could not start.
	Program string
	// Err is context.Canceled, the *subprocess.StartError that kept the
	// program from starting, or an error that says which of the above.
	Err error
}

// Error says how the hook failed and, when it wrote any, the start of its
// stderr.
func (e *hookError) Error() string {
	var msg string
	switch {
	case errors.Is(e.Err, errHookOutput):
		msg = "hook printed no answer: " + e.Problem
	case errors.Is(e.Err, errHookTimeout):
		msg = fmt.Sprintf("hook did not answer within %s and was stopped", e.Timeout)
	case e.Outcome.Kind == subprocess.StartFailed:
		var se *subprocess.StartError
		why := e.Outcome.String()
		if errors.As(e.Outcome.Err, &se) && se.Err != nil {
			why = se.Err.Error()
		}
		msg = fmt.Sprintf("hook program %s could not start: %s", display.Escape(e.Program), why)
	default:
		msg = "hook " + e.Outcome.String()
	}
	if e.Stderr != "" {
		msg += "; its stderr: " + e.Stderr
	}
	return msg
}

// Unwrap returns Err.
func (e *hookError) Unwrap() error { return e.Err }

// Approve runs the hook once. On any failure it returns an error and a
// Deny whose reason is the error's text.
func (h Hook) Approve(ctx context.Context, req Request) (Answer, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = defaultHookTimeout
	}
	payload, err := req.MarshalJSON()
	if err != nil {
		return denyFor(fmt.Errorf("approver: encoding the request for the hook: %w", err))
	}
	res, err := subprocess.Run(ctx, &subprocess.Cmd{
		Argv:        h.Argv,
		Root:        h.Root,
		Env:         childenv.Inherited(h.Env, h.PassEnv),
		Stdin:       payload,
		Timeout:     timeout,
		StdoutLimit: hookStdoutLimit,
	})
	if err != nil {
		return denyFor(fmt.Errorf("approver: the hook cannot be run: %w", err))
	}
	herr := &hookError{Outcome: res.Outcome, Timeout: timeout, Stderr: oneLine(string(res.Stderr), maxReasonDetail), Program: h.Argv[0]}
	switch res.Outcome.Kind {
	case subprocess.Exited:
		if res.Outcome.Code != 0 {
			herr.Err = errHookExit
			return denyFor(herr)
		}
	case subprocess.Signaled:
		herr.Err = errHookExit
		return denyFor(herr)
	case subprocess.TimedOut:
		herr.Err = errHookTimeout
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
		herr.Err, herr.Problem = errHookOutput, fmt.Sprintf("its output is longer than %d bytes", hookStdoutLimit)
		return denyFor(herr)
	}
	answer, problem := parseHookAnswer(res.Stdout)
	if problem != "" {
		herr.Err, herr.Problem = errHookOutput, problem
		return denyFor(herr)
	}
	return answer, nil
}

const hookAnswerShape = `{"decision": "allow", "reason": "..."}`

// parseHookAnswer reads the hook's stdout strictly, or says what is wrong
// with it without quoting it: exactly one JSON object with nothing after it
// but whitespace, keys spelled exactly ("DECISION" is not "decision"), each
// at most once — JSON readers disagree on which of two equal keys wins, so
// a repeated one is not an answer.
func parseHookAnswer(out []byte) (Answer, string) {
	if len(bytes.TrimSpace(out)) == 0 {
		return Answer{}, "its stdout is empty; print " + hookAnswerShape
	}
	doc, err := configfile.Parse(out)
	if err != nil {
		var syn *configfile.SyntaxError
		if errors.As(err, &syn) {
			switch syn.Kind {
			case configfile.SyntaxTrailing:
				return Answer{}, "its stdout has more after the JSON object; print exactly one object"
			case configfile.SyntaxIncomplete:
				return Answer{}, "its stdout ends before its JSON object does; print " + hookAnswerShape
			}
		}
		return Answer{}, "its stdout is not JSON; print " + hookAnswerShape
	}
	if doc.Kind() != "object" {
		return Answer{}, "its stdout is not a JSON object; print " + hookAnswerShape
	}
	var a Answer
	var rememberRaw *configfile.Value
	seen := map[string]bool{}
	for _, m := range doc.Members() {
		if seen[m.Key] {
			return Answer{}, fmt.Sprintf("key %s appears more than once; print each key once", describeKey(m.Key))
		}
		seen[m.Key] = true
		switch m.Key {
		case "decision":
			text, ok := m.Value.Text()
			if !ok {
				return Answer{}, `"decision" must be a string; print ` + hookAnswerShape
			}
			if err := a.Decision.UnmarshalText([]byte(text)); err != nil {
				return Answer{}, `"decision" is not one of allow, deny, allow_session, deny_session`
			}
		case "reason":
			text, ok := m.Value.Text()
			if !ok {
				return Answer{}, `"reason" must be a string`
			}
			a.Reason = text
		case "remember":
			v := m.Value
			rememberRaw = &v
		default:
			return Answer{}, fmt.Sprintf("unknown key %s; the answer has only \"decision\", \"reason\" and \"remember\"", describeKey(m.Key))
		}
	}
	if !seen["decision"] {
		return Answer{}, `"decision" is missing; print ` + hookAnswerShape
	}
	if rememberRaw != nil {
		if !a.Decision.ForSession() {
			return Answer{}, `"remember" goes only with "allow_session" or "deny_session"`
		}
		r, problem := parseRemember(*rememberRaw)
		if problem != "" {
			return Answer{}, `"remember" is not usable: ` + problem
		}
		if err := r.check(); err != nil {
			return Answer{}, `"remember" is not usable: ` + err.Error()
		}
		a.Remember = r
	}
	return a, ""
}

// parseRemember reads {"tool": true} or {"command": [...]} as strictly as
// the answer around it.
func parseRemember(v configfile.Value) (*Remember, string) {
	if v.Kind() != "object" {
		return nil, `write {"tool": true}, {"command": ["go", "test", "*"]} or {"proposed": true}`
	}
	r := &Remember{}
	seen := map[string]bool{}
	for _, m := range v.Members() {
		if seen[m.Key] {
			return nil, fmt.Sprintf("key %s appears more than once", describeKey(m.Key))
		}
		seen[m.Key] = true
		switch m.Key {
		case "tool":
			switch string(m.Value.Raw) {
			case "true":
				r.Tool = true
			case "false":
			default:
				return nil, `"tool" must be true or false`
			}
		case "command":
			words, ok := stringList(m.Value)
			if !ok {
				return nil, `"command" must be a list of strings, such as ["go", "test", "*"]`
			}
			r.Command = words
		case "proposed":
			switch string(m.Value.Raw) {
			case "true":
				r.Proposed = true
			case "false":
			default:
				return nil, `"proposed" must be true or false`
			}
		default:
			return nil, fmt.Sprintf("unknown key %s; it has only \"tool\", \"command\" and \"proposed\"", describeKey(m.Key))
		}
	}
	return r, ""
}

// stringList decodes a JSON list of strings.
func stringList(v configfile.Value) ([]string, bool) {
	if v.Kind() != "array" {
		return nil, false
	}
	elems := v.Elements()
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		s, ok := e.Text()
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// describeKey quotes a key for a message when it looks like one; anything
// else may be a value pasted in the wrong place and is only described.
func describeKey(key string) string {
	if configfile.LooksLikeKey(key) {
		return strconv.Quote(key)
	}
	return fmt.Sprintf("(a key of %d characters that does not look like a key)", utf8.RuneCountInString(key))
}

func denyFor(err error) (Answer, error) {
	return Answer{Decision: Deny, Reason: err.Error()}, err
}
