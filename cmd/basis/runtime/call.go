//go:build unix

package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Status is how a call ended, spelled as the audit log and basis call
// --json spell it. The zero value, "", is no status at all: an Outcome
// nobody filled in never reads as success, and it neither marshals nor
// unmarshals.
type Status string

const (
	// StatusOK: the tool ran and succeeded; Text is its result.
	StatusOK Status = "ok"
	// StatusToolError: the tool ran and failed; Text says how.
	StatusToolError Status = "tool_error"
	// StatusRefused: the tool never ran; Stage says where it was stopped
	// and Text says why.
	StatusRefused Status = "refused"
)

var statuses = []Status{StatusOK, StatusToolError, StatusRefused}

// MarshalText implements [encoding.TextMarshaler]. It refuses a Status
// that is none of the constants, the zero value among them.
func (s Status) MarshalText() ([]byte, error) {
	if !slices.Contains(statuses, s) {
		return nil, fmt.Errorf("runtime: %q is not a status; want one of %s", string(s), enumList(statuses))
	}
	return []byte(s), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler], for reading audit
// records back. It accepts only the names of the constants.
func (s *Status) UnmarshalText(text []byte) error {
	if !slices.Contains(statuses, Status(text)) {
		return fmt.Errorf("runtime: unknown status %q: want one of %s", text, enumList(statuses))
	}
	*s = Status(text)
	return nil
}

// Stage is where a refused call was stopped, spelled as the audit log and
// basis call --json spell it.
type Stage string

const (
	// StageNone: the call was not refused.
	StageNone Stage = ""
	// StageUnknown: no tool has the name the model used.
	StageUnknown Stage = "unknown"
	// StageInvalid: the input is not one JSON object matching the tool's
	// schema, or checking it against the schema ran out of its budget
	// (an *inputschema.BudgetError) or was stopped by the caller's
	// context (Err wraps the context's error).
	StageInvalid Stage = "invalid"
	// StagePreview: the tool refused the call in its authorization preview.
	StagePreview Stage = "preview"
	// StageDenied: the gate denied the call.
	StageDenied Stage = "denied"
	// StageAudit: the gate allowed the call, but its start record could
	// not be written to the audit log, so it was not run (see
	// [Options.Audit]).
	StageAudit Stage = "audit"
)

var stages = []Stage{StageNone, StageUnknown, StageInvalid, StagePreview, StageDenied, StageAudit}

// MarshalText implements [encoding.TextMarshaler]. StageNone is the empty
// text; a Stage that is none of the constants is refused.
func (s Stage) MarshalText() ([]byte, error) {
	if !slices.Contains(stages, s) {
		return nil, fmt.Errorf("runtime: %q is not a stage; want one of %s", string(s), enumList(stages[1:]))
	}
	return []byte(s), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler], for reading audit
// records back. It accepts only the names of the constants.
func (s *Stage) UnmarshalText(text []byte) error {
	if !slices.Contains(stages, Stage(text)) {
		return fmt.Errorf("runtime: unknown stage %q: want one of %s", text, enumList(stages[1:]))
	}
	*s = Stage(text)
	return nil
}

// enumList is the names of an enumeration, for an error.
func enumList[E ~string](names []E) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = string(n)
	}
	return strings.Join(q, ", ")
}

// Outcome is what became of one call. Text is always what the model reads.
type Outcome struct {
	// CallID is the call's ID and Tool the name the model used.
	CallID string
	Tool   string
	// Status is how the call ended; an Outcome the runtime returned always
	// has one.
	Status Status
	// Stage is set when Status is StatusRefused.
	Stage Stage
	// Text is the result, the failure or the refusal, in words for the
	// model.
	Text string
	// Truncated reports that the tool's result was cut short.
	Truncated bool
	// Content, Structured and Meta are the tool's result beyond its text,
	// as the tool gave them ([contract.Result]): set for a result, and for
	// a failure that came with one ([contract.ResultError]), such as an
	// MCP tool's isError result. Never set for a refusal. A host serving
	// MCP passes them on; a terminal reads Text.
	Content    []json.RawMessage
	Structured json.RawMessage
	Meta       json.RawMessage
	// Preview is the call's authorization preview, when one was made.
	Preview *contract.Preview
	// Verdict is the gate's decision, when the gate was asked.
	Verdict *approver.Verdict
	// Exit is how the program the tool ran ended, when the tool reported a
	// failed program (a *subprocess.ExitError in its error chain).
	Exit *subprocess.Outcome
	// Err is set unless Status is StatusOK: a *[RefusalError] for a
	// refusal, the tool's error for a failure (a *[TimeoutError] when a
	// deadline stopped it, a *[PanicError] when it panicked). Use
	// errors.Is with [contract.ErrInvalidInput], [contract.ErrRefused],
	// [ErrUnknownTool], [ErrDenied], [ErrAuditFailed] or
	// [context.DeadlineExceeded] to tell them apart.
	Err error
	// Duration is the wall time of the whole pipeline.
	Duration time.Duration
}

// Call runs one call through the whole pipeline: look the tool up, read
// the input strictly into its canonical form ([contract.CanonicalInput])
// and check it against the tool's schema, ask the tool for its preview
// (and, for a call the gate will judge, its [contract.Definer]
// definition), ask the gate, write the audit's start record, execute under
// the tool's timeout, and write the audit's end record. The tool's methods
// get a context that carries call.ID ([contract.CallID]).
// The preview and Execute both receive the canonical input, so what the
// approver saw is what runs. Call never returns an error: everything that
// can happen is in the Outcome.
func (rt *Runtime) Call(ctx context.Context, name string, call contract.Call) Outcome {
	return rt.callIn(ctx, rt.roster.Load(), name, call)
}

func (rt *Runtime) callIn(ctx context.Context, ro *roster, name string, call contract.Call) Outcome {
	start := time.Now()
	r := ro.byName[name]
	var observed func(*Outcome)
	if rt.opts.Observer != nil {
		ctx, observed = rt.observe(ctx, r, name, call)
	}
	out := rt.call(ctx, ro, r, name, call)
	out.CallID, out.Tool = call.ID, name
	out.Duration = time.Since(start)
	if rt.audit != nil {
		rt.audit.end(start, r, &out)
	}
	if observed != nil {
		observed(&out)
	}
	return out
}

// observe tells the observer of a call; the end function is never nil.
func (rt *Runtime) observe(ctx context.Context, r *registered, name string, call contract.Call) (context.Context, func(*Outcome)) {
	cs := CallStart{Tool: name, CallID: call.ID, Input: call.Input}
	if r != nil {
		cs.Source, cs.MCP = r.source, r.mcp
	}
	ctx, end := rt.opts.Observer.StartCall(ctx, cs)
	if end == nil {
		end = func(*Outcome) {}
	}
	return ctx, end
}

func (rt *Runtime) call(ctx context.Context, ro *roster, r *registered, name string, call contract.Call) Outcome {
	if r == nil {
		return refused(name, StageUnknown, unknownToolText(name, ro.names()), nil)
	}
	ctx = contract.WithCallID(ctx, call.ID)
	input, refusal := checkInput(ctx, r, name, call.Input)
	if refusal != nil {
		return *refusal
	}
	call.Input = input

	pctx, endPreview := rt.startPhase(ctx, PhasePreview)
	preview, text, err := previewOf(pctx, r, call)
	if err != nil {
		endPreview(PhaseEnd{Err: err})
		return refused(name, StagePreview, text, err)
	}
	def, text, err := rt.definitionFor(pctx, r, preview)
	endPreview(PhaseEnd{Err: err, Preview: &preview})
	if err != nil {
		return refused(name, StagePreview, text, err)
	}
	gctx, endGate := rt.startPhase(ctx, PhaseGate)
	verdict := rt.authorize(gctx, r, call, preview, def)
	endGate(PhaseEnd{Err: verdict.Err, Verdict: &verdict})
	if !verdict.Allow {
		out := refused(name, StageDenied, verdict.Reason, verdict.Err)
		out.Preview, out.Verdict = &preview, &verdict
		return out
	}
	if rt.audit != nil {
		if err := rt.audit.start(r, call, &preview, &verdict); err != nil {
			// An audit that silently loses what ran is worse than none:
			// a call that changes something runs only once it is on
			// record. A read changes nothing and passes the gate
			// unasked; it runs, and the failure is reported.
			if preview.SideEffect.Consequential() {
				out := refused(name, StageAudit, fmt.Sprintf("%s was not run: its audit record could not be written (%v); "+
					"a call that cannot be audited is not run: make the audit log writable again (free space on its disk, say), then call again", name, err), err)
				out.Preview, out.Verdict = &preview, &verdict
				return out
			}
			rt.audit.report(err)
		}
	}

	ectx, endExecute := rt.startPhase(ctx, PhaseExecute)
	out := rt.execute(ectx, r, call)
	endExecute(PhaseEnd{Err: out.Err})
	out.Preview, out.Verdict = &preview, &verdict
	return out
}

// authorize asks the gate. With no gate, only calls that change nothing
// pass.
func (rt *Runtime) authorize(ctx context.Context, r *registered, call contract.Call, p contract.Preview, def json.RawMessage) approver.Verdict {
	name := r.desc.Name
	if rt.gate != nil {
		return rt.gate.Authorize(ctx, approver.Request{CallID: call.ID, Tool: name, Source: r.ruleSource, Definition: def, Preview: p, Input: call.Input})
	}
	if !p.SideEffect.Consequential() {
		return approver.Verdict{Allow: true, Source: approver.SourceReadOnly, Reason: "reads only"}
	}
	return approver.Verdict{Source: approver.SourceFailClosed,
		Reason: fmt.Sprintf("%s was not run: this runtime has no approval gate, so calls that %s are refused", name, effectWords(p.SideEffect))}
}

// previewOf asks the tool for its preview and reads its refusal's text,
// both under one recover: a panic in the preview, or in the Error method
// of the error it returned, is a refusal.
func previewOf(ctx context.Context, r *registered, call contract.Call) (p contract.Preview, text string, err error) {
	method := "AuthorizationPreview"
	defer func() {
		if v := recover(); v != nil {
			p, err = contract.Preview{}, &PanicError{Tool: r.desc.Name, Method: method, Value: panicText(v)}
			text = err.Error()
		}
	}()
	p, err = r.tool.AuthorizationPreview(ctx, call)
	if err != nil {
		method = "Error"
		text = err.Error()
	}
	return p, text, err
}

// definitionFor asks a tool that has a definition ([contract.Definer])
// for it, when the gate will judge the call: a consequential call. A
// failure — an error, or a panic in the method or in the error's Error —
// is a refusal at the preview stage, as the preview's own is: a tool that
// cannot say what it is cannot be approved.
func (rt *Runtime) definitionFor(ctx context.Context, r *registered, p contract.Preview) (def json.RawMessage, text string, err error) {
	if rt.gate == nil || !p.SideEffect.Consequential() && !rt.gate.AsksReadOnly() {
		return nil, "", nil
	}
	return definitionOf(ctx, r)
}

// definitionOf is the tool's definition, or the refusal its failure is.
func definitionOf(ctx context.Context, r *registered) (def json.RawMessage, text string, err error) {
	d, ok := r.tool.(contract.Definer)
	if !ok {
		return nil, "", nil
	}
	method := "Definition"
	defer func() {
		if v := recover(); v != nil {
			def, err = nil, &PanicError{Tool: r.desc.Name, Method: method, Value: panicText(v)}
			text = err.Error()
		}
	}()
	def, err = d.Definition(ctx)
	if err != nil {
		method = "Error"
		text = err.Error()
	}
	return def, text, err
}

// backupMargin is how much longer than a tool's own timeout the runtime
// lets a call run before its own deadline fires: enough that the tool's
// deadline always fires first and the tool says so in its own words, short
// enough to stop a tool that ignores its timeout soon after.
func backupMargin(limit time.Duration) time.Duration {
	return max(250*time.Millisecond, min(limit/10, 5*time.Second))
}

// execute runs the tool under its deadline and puts what happened into an
// Outcome. Everything that calls the tool's code — Execute, the Error and
// Unwrap methods of its error — runs under one recover: a host's tool must
// not take the runtime down with it.
func (rt *Runtime) execute(ctx context.Context, r *registered, call contract.Call) (out Outcome) {
	limit, own := r.desc.Timeout, true
	if limit <= 0 {
		limit, own = rt.opts.DefaultTimeout, false
	}
	// A tool with a timeout of its own enforces it and says so; the
	// runtime's deadline only backs it up.
	deadline := limit
	if own {
		deadline += backupMargin(limit)
	}
	runCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	if rt.audit != nil {
		runCtx = contract.WithInputRounds(runCtx, func(ir contract.InputRound) { rt.audit.input(r, call, ir) })
	}

	method := "Execute"
	defer func() {
		if v := recover(); v != nil {
			err := &PanicError{Tool: r.desc.Name, Method: method, Value: panicText(v)}
			out = Outcome{Status: StatusToolError, Text: err.Error(), Err: err}
		}
	}()
	res, err := r.tool.Execute(runCtx, call)
	if err == nil {
		return Outcome{Status: StatusOK, Text: res.Text, Truncated: res.Truncated,
			Content: res.Content, Structured: res.Structured, Meta: res.Meta}
	}
	method = "Error"
	out = Outcome{Status: StatusToolError, Text: err.Error(), Err: err}
	if re, ok := errors.AsType[*contract.ResultError](err); ok {
		out.Content, out.Structured, out.Meta = re.Result.Content, re.Result.Structured, re.Result.Meta
	}
	var exit *subprocess.ExitError
	if errors.As(err, &exit) {
		out.Exit = &exit.Outcome
	}
	// Which deadline stopped the tool is named, and what raises it; a
	// deadline or cancellation of the caller's own is the caller's to
	// explain.
	if ctx.Err() == nil && (errors.Is(runCtx.Err(), context.DeadlineExceeded) ||
		own && (exit != nil && exit.Outcome.Kind == subprocess.TimedOut || errors.Is(err, context.DeadlineExceeded))) {
		text := out.Text
		if text == "" {
			text = r.desc.Name + " did not finish in time"
		}
		te := &TimeoutError{Tool: r.desc.Name, Limit: limit, ToolTimeout: own, Err: err,
			text: text + " (" + limitText(r.desc, limit, own) + ")"}
		out.Text, out.Err = te.text, te
	}
	return out
}

func refused(name string, stage Stage, text string, cause error) Outcome {
	return Outcome{Status: StatusRefused, Stage: stage, Text: text, Err: &RefusalError{Tool: name, Stage: stage, Err: cause, text: text}}
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

// checkInput reads the input strictly into its canonical form and checks it
// against the tool's schema, which stops when ctx is done; a refusal is the
// Outcome Call returns.
func checkInput(ctx context.Context, r *registered, name string, raw []byte) ([]byte, *Outcome) {
	// One read gives the canonical bytes and the object the schema checks.
	input, err := contract.DecodeInput(raw)
	if err != nil {
		out := refused(name, StageInvalid, "the input for "+name+" is invalid: "+strings.TrimPrefix(err.Error(), contract.ErrInvalidInput.Error()+": "), err)
		return nil, &out
	}
	if err := r.schema.CheckDecoded(ctx, name, input); err != nil {
		out := refused(name, StageInvalid, err.Error(), err)
		return nil, &out
	}
	return input.Canonical(), nil
}
