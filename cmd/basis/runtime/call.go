package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Status is how a call ended.
type Status int

const (
	// StatusOK: the tool ran and succeeded; Text is its result.
	StatusOK Status = iota
	// StatusToolError: the tool ran and failed; Text says how.
	StatusToolError
	// StatusRefused: the tool never ran; Stage says where it was stopped
	// and Text says why.
	StatusRefused
)

var statusNames = [...]string{StatusOK: "ok", StatusToolError: "tool_error", StatusRefused: "refused"}

func (s Status) String() string { return enumText(statusNames[:], int(s)) }

// MarshalText implements [encoding.TextMarshaler].
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler], for reading audit
// records back.
func (s *Status) UnmarshalText(text []byte) error {
	i, err := enumParse(statusNames[:], string(text), "status")
	*s = Status(i)
	return err
}

// Stage is where a refused call was stopped.
type Stage int

const (
	// StageNone: the call was not refused.
	StageNone Stage = iota
	// StageUnknown: no tool has the name the model used.
	StageUnknown
	// StageInvalid: the input does not match the tool's schema.
	StageInvalid
	// StagePreview: the tool refused the call in its authorization preview.
	StagePreview
	// StageDenied: the gate denied the call.
	StageDenied
)

var stageNames = [...]string{StageNone: "", StageUnknown: "unknown", StageInvalid: "invalid", StagePreview: "preview", StageDenied: "denied"}

func (s Stage) String() string { return enumText(stageNames[:], int(s)) }

// MarshalText implements [encoding.TextMarshaler].
func (s Stage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler], for reading audit
// records back.
func (s *Stage) UnmarshalText(text []byte) error {
	i, err := enumParse(stageNames[:], string(text), "stage")
	*s = Stage(i)
	return err
}

func enumParse(names []string, text, what string) (int, error) {
	for i, n := range names {
		if n == text {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q: want one of %s", what, text, strings.Join(names, ", "))
}

func enumText(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%d", i)
}

// Outcome is what became of one call. Text is always what the model reads.
type Outcome struct {
	CallID string
	Tool   string
	Status Status
	// Stage is set when Status is StatusRefused.
	Stage Stage
	// Text is the result, the failure or the refusal, in words for the
	// model.
	Text string
	// Truncated reports that the tool's result was cut short.
	Truncated bool
	// Preview is the call's authorization preview, when one was made.
	Preview *contract.Preview
	// Verdict is the gate's decision, when the gate was asked.
	Verdict *approver.Verdict
	// Exit is how the program the tool ran ended, when the tool reported a
	// failed program (a *subprocess.ExitError in its error chain).
	Exit *subprocess.Outcome
	// Err is the underlying error of a tool failure or a refusal.
	Err error
	// Duration is the wall time of the whole pipeline.
	Duration time.Duration
}

// Call runs one call through the whole pipeline: look the tool up, check
// the input against its schema, ask the tool for its preview, ask the gate,
// execute under the tool's timeout, and write the audit record. It never
// returns an error: everything that can happen is in the Outcome.
func (rt *Runtime) Call(ctx context.Context, name string, call contract.Call) Outcome {
	start := time.Now()
	out := rt.call(ctx, name, call)
	out.CallID, out.Tool = call.ID, name
	out.Duration = time.Since(start)
	if rt.audit != nil {
		rt.audit.record(start, rt.byName[name], &out)
	}
	return out
}

func (rt *Runtime) call(ctx context.Context, name string, call contract.Call) Outcome {
	r, ok := rt.byName[name]
	if !ok {
		return refused(StageUnknown, unknownToolText(name, rt.names()), nil)
	}
	if len(strings.TrimSpace(string(call.Input))) == 0 {
		call.Input = json.RawMessage(`{}`)
	}
	if err := r.schema.Check(name, call.Input); err != nil {
		return refused(StageInvalid, err.Error(), err)
	}

	preview, err := previewOf(ctx, r.tool, call)
	if err != nil {
		return refused(StagePreview, err.Error(), err)
	}
	verdict := rt.authorize(ctx, name, call, preview)
	if !verdict.Allow {
		out := refused(StageDenied, verdict.Reason, nil)
		out.Preview, out.Verdict = &preview, &verdict
		return out
	}

	timeout := r.desc.Timeout
	if timeout <= 0 {
		timeout = rt.opts.DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := execute(runCtx, r.tool, call)
	out := Outcome{Status: StatusOK, Text: res.Text, Truncated: res.Truncated, Preview: &preview, Verdict: &verdict}
	if err != nil {
		out.Status, out.Text, out.Err = StatusToolError, err.Error(), err
		var exit *subprocess.ExitError
		if errors.As(err, &exit) {
			out.Exit = &exit.Outcome
		}
	}
	return out
}

// authorize asks the gate. With no gate, only calls that change nothing
// pass.
func (rt *Runtime) authorize(ctx context.Context, name string, call contract.Call, p contract.Preview) approver.Verdict {
	if rt.gate != nil {
		return rt.gate.Authorize(ctx, name, call, p)
	}
	if !p.SideEffect.Consequential() {
		return approver.Verdict{Allow: true, Source: approver.SourceReadOnly, Reason: "reads only"}
	}
	return approver.Verdict{Source: approver.SourceFailClosed,
		Reason: fmt.Sprintf("%s was not run: this runtime has no approval gate, so calls that %s are refused", name, effectWords(p.SideEffect))}
}

// previewOf asks the tool for its preview; a panic is a refusal.
func previewOf(ctx context.Context, tool contract.ExecutableTool, call contract.Call) (p contract.Preview, err error) {
	defer func() {
		if v := recover(); v != nil {
			p, err = contract.Preview{}, fmt.Errorf("%s refused the call: its authorization preview panicked (%v)", tool.Descriptor().Name, v)
		}
	}()
	return tool.AuthorizationPreview(ctx, call)
}

// execute runs the tool, turning a panic into a tool failure: a host's
// tool must not take the runtime down with it.
func execute(ctx context.Context, tool contract.ExecutableTool, call contract.Call) (res contract.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = contract.Result{}, fmt.Errorf("%s failed: it panicked (%v)", tool.Descriptor().Name, p)
		}
	}()
	return tool.Execute(ctx, call)
}

func refused(stage Stage, text string, err error) Outcome {
	return Outcome{Status: StatusRefused, Stage: stage, Text: text, Err: err}
}

func effectWords(s contract.SideEffect) string {
	switch s {
	case contract.SideEffectLocalState:
		return "change local state"
	case contract.SideEffectProcess:
		return "run programs"
	case contract.SideEffectExternal:
		return "reach outside this machine"
	}
	return "have side effects"
}
