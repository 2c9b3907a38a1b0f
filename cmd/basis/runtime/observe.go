//go:build unix

package runtime

import (
	"context"
	"encoding/json"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// Observer watches calls go through the pipeline, for tracing and
// metrics (the otelbasis module implements it with OpenTelemetry). It is
// the runtime's only telemetry: the runtime links no tracing library, and
// with [Options.Observer] nil it costs one pointer check per call and
// stage.
//
// Each method returns the context the rest of that call or phase runs in
// (where an observer keeps its span) and the function the runtime calls,
// exactly once, when it ends. Both methods are called from the call's
// goroutine, concurrently for the calls of a batch.
type Observer interface {
	// StartCall is called when a call enters the pipeline, before the
	// tool is looked up.
	StartCall(ctx context.Context, call CallStart) (context.Context, func(*Outcome))
	// StartPhase is called when one of the call's costly phases begins,
	// with the context StartCall returned; a phase that is not reached is
	// not started.
	StartPhase(ctx context.Context, phase Phase) (context.Context, func(PhaseEnd))
}

// CallStart describes a call as it enters the pipeline.
type CallStart struct {
	// Tool is the name the model used and CallID the call's ID.
	Tool   string
	CallID string
	// Source is where the tool came from, as messages name it: its
	// descriptor's Source (a manifest, an MCP config and server), or its
	// Binding when that is empty; empty for an unknown tool.
	Source string
	// MCP reports that the tool is bridged from an MCP server.
	MCP bool
	// Input is the input as the model sent it. It may hold secrets: an
	// observer records it only when its operator asked for it.
	Input json.RawMessage
}

// Phase is a costly part of the pipeline an [Observer] is told of.
type Phase string

const (
	// PhasePreview: the tool's authorization preview (and its
	// definition, when the gate will judge the call).
	PhasePreview Phase = "preview"
	// PhaseGate: the gate's decision, a person's answer included.
	PhaseGate Phase = "gate"
	// PhaseExecute: the tool's execution.
	PhaseExecute Phase = "execute"
)

// PhaseEnd is how a phase ended.
type PhaseEnd struct {
	// Err is the phase's failure: the preview's refusal, the gate's
	// fail-closed cause, the tool's error. Nil when it succeeded, and for
	// a denial by a rule or a person (Verdict says so).
	Err error
	// Preview is the preview PhasePreview made.
	Preview *contract.Preview
	// Verdict is the gate's verdict, for PhaseGate.
	Verdict *approver.Verdict
}

// startPhase starts a phase when the runtime has an observer; the end
// function is never nil.
func (rt *Runtime) startPhase(ctx context.Context, phase Phase) (context.Context, func(PhaseEnd)) {
	if rt.opts.Observer == nil {
		return ctx, noPhaseEnd
	}
	ctx, end := rt.opts.Observer.StartPhase(ctx, phase)
	if end == nil {
		end = noPhaseEnd
	}
	return ctx, end
}

func noPhaseEnd(PhaseEnd) {}
