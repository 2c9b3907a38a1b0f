//go:build unix

package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/basis-go/basis/contract"
)

// Refusal kinds basis decides itself, for [errors.Is] on [Outcome.Err]
// and on the error of a call through a host's own loop, where only the
// error travels (an [Outcome] also says it as its [Stage]). The other two
// refusals wrap the contract's sentinels: invalid input
// [contract.ErrInvalidInput], a preview refusal [contract.ErrRefused].
var (
	// ErrUnknownTool: no tool has the name the model used. A host
	// branches on it to offer the model the tool list again. Also
	// wrapped by [Runtime.Definition]'s error for a name no tool has.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDenied: the gate denied the call. A host branches on it to stop
	// retrying what a person or a rule refused.
	ErrDenied = errors.New("denied")
	// ErrAuditFailed: the call's start record could not be written to
	// the audit log, so the call was not run. A host branches on it to
	// stop the session: nothing consequential can run unrecorded.
	ErrAuditFailed = errors.New("audit record not written")
)

// RefusalError is [Outcome.Err] of every refused call. Its text is what the
// model reads. errors.Is matches the sentinel of its stage —
// [ErrUnknownTool], [contract.ErrInvalidInput], [contract.ErrRefused],
// [ErrDenied] or [ErrAuditFailed] — and anything its cause wraps.
type RefusalError struct {
	// Tool is the name the model used.
	Tool string
	// Stage is where the call was stopped.
	Stage Stage
	// Err is the cause, when there is one: the input's problem (an
	// *inputschema.InputError, say), the tool's preview error, why the
	// gate failed closed, or the audit writer's error.
	Err  error
	text string
}

// Error returns the refusal as the model reads it.
func (e *RefusalError) Error() string { return e.text }

// Unwrap returns the cause, when there is one, and the stage's sentinel.
func (e *RefusalError) Unwrap() []error {
	var kind error
	switch e.Stage {
	case StageUnknown:
		kind = ErrUnknownTool
	case StageInvalid:
		kind = contract.ErrInvalidInput
	case StagePreview:
		kind = contract.ErrRefused
	case StageDenied:
		kind = ErrDenied
	case StageAudit:
		kind = ErrAuditFailed
	}
	var out []error
	for _, err := range []error{e.Err, kind} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// PanicError is [Outcome.Err] when a tool panicked: in its authorization
// preview, in Execute, or in the Error method of the error it returned. The
// runtime recovers, so one tool cannot take its host down.
type PanicError struct {
	// Tool is the tool's name.
	Tool string
	// Method is what panicked: "AuthorizationPreview", "Execute", or
	// "Error" for a method of the error the tool returned (Error, or an
	// Unwrap the runtime called to look for a program's exit).
	Method string
	// Value is the panic's value, in words.
	Value string
}

// Error says which tool panicked, where, and with what.
func (e *PanicError) Error() string {
	switch e.Method {
	case "AuthorizationPreview":
		return fmt.Sprintf("%s refused the call: its authorization preview panicked (%s)", e.Tool, e.Value)
	case "Error":
		return fmt.Sprintf("%s's error could not be read: it panicked (%s)", e.Tool, e.Value)
	}
	return fmt.Sprintf("%s failed: it panicked (%s)", e.Tool, e.Value)
}

// panicText puts a panic's value into words. fmt recovers from a panicking
// Error or String method once, but panics again if the value describing
// that panic panics too, so it is guarded here as well.
func panicText(v any) (text string) {
	defer func() {
		if recover() != nil {
			text = "a value that panics when printed"
		}
	}()
	return fmt.Sprint(v)
}

// TimeoutError is [Outcome.Err] when a deadline stopped a tool: the tool's
// own timeout ([contract.Descriptor.Timeout]) or, for a tool that states
// none, the runtime's [Options.DefaultTimeout]. Its text is the tool's
// own, followed by which limit fired and which setting raises it. errors.Is
// matches [context.DeadlineExceeded] and whatever the tool's error wraps.
type TimeoutError struct {
	// Tool is the tool's name.
	Tool string
	// Limit is how long the call was allowed to run.
	Limit time.Duration
	// ToolTimeout reports that Limit is the tool's own timeout, not the
	// runtime's default.
	ToolTimeout bool
	// Err is the tool's error.
	Err  error
	text string
}

// Error returns the tool's text followed by the limit that fired.
func (e *TimeoutError) Error() string { return e.text }

// Unwrap returns the tool's error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is reports that a timeout is a [context.DeadlineExceeded], whatever the
// tool's error says.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// limitText says which limit fired and what raises it, by the binding that
// provides the tool, since each has its own setting.
func limitText(d contract.Descriptor, limit time.Duration, own bool) string {
	if !own {
		return fmt.Sprintf("the runtime's default of %s fired, since the tool states no timeout of its own; hosts set Options.DefaultTimeout", limit)
	}
	setting := "its Descriptor.Timeout raises it"
	switch d.Binding {
	case contract.BindingDeclared:
		setting = "timeout_ms in the manifest raises it"
	case contract.BindingMCP:
		setting = "call_timeout_ms of the server in its MCP config raises it"
	case contract.BindingSpawn:
		setting = "the spawn tool's command timeout raises it"
	}
	return fmt.Sprintf("the tool's timeout of %s fired; %s", limit, setting)
}
