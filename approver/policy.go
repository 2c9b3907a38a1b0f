//go:build unix

package approver

import (
	"context"
	"fmt"
	"slices"

	"github.com/basis-go/basis/contract"
)

// SideEffectPolicy decides by a call's side-effect level alone, for every
// tool ([BySideEffect]).
type SideEffectPolicy struct {
	// Allow lists the levels allowed without asking.
	Allow []contract.SideEffect
	// Deny lists the levels denied without asking; it wins over Allow.
	Deny []contract.SideEffect
	// Otherwise is asked about every other level. Nil denies them.
	Otherwise Approver
}

// BySideEffect returns an approver that applies p to each call. It
// answers at once (see [Immediate]) when p.Otherwise is nil or does.
func BySideEffect(p SideEffectPolicy) Approver {
	p.Allow = slices.Clone(p.Allow)
	p.Deny = slices.Clone(p.Deny)
	decide := func(ctx context.Context, req Request) (Answer, error) {
		level := req.Preview.SideEffect
		switch {
		case slices.Contains(p.Deny, level):
			return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied: calls with side effect %s are not allowed here", req.Tool, level)}, nil
		case slices.Contains(p.Allow, level):
			return Answer{Decision: Allow, Reason: fmt.Sprintf("calls with side effect %s are allowed here", level)}, nil
		case p.Otherwise != nil:
			return p.Otherwise.Approve(ctx, req)
		}
		return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied: calls with side effect %s are neither allowed nor asked about here", req.Tool, level)}, nil
	}
	if p.Otherwise == nil || IsImmediate(p.Otherwise) {
		return ImmediateFunc(decide)
	}
	return ApproverFunc(decide)
}

// LocalEditsNoNetwork allows local edits, denies calls that reach beyond
// this machine, and sends programs run here to ask (nil: denied).
func LocalEditsNoNetwork(ask Approver) Approver {
	return BySideEffect(SideEffectPolicy{
		Allow:     []contract.SideEffect{contract.SideEffectLocalState},
		Deny:      []contract.SideEffect{contract.SideEffectExternal},
		Otherwise: ask,
	})
}
