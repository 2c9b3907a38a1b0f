package approver

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/basis-go/basis/contract"
)

// Source says where a [Verdict] came from.
type Source int

const (
	// SourceReadOnly: the call's preview said it only reads, so it passed
	// without a rule or an approver.
	SourceReadOnly Source = iota + 1
	// SourceRule: a rule answered; [Verdict.Rule] is the one.
	SourceRule
	// SourceApprover: the approver answered.
	SourceApprover
	// SourceFailClosed: nothing answered — the approver failed, panicked,
	// gave no decision or ran out of time, the context was cancelled, or
	// there was no approver — and the call is denied. [Verdict.Err] says
	// which.
	SourceFailClosed
)

var sourceNames = [...]string{
	SourceReadOnly:   "read_only",
	SourceRule:       "rule",
	SourceApprover:   "approver",
	SourceFailClosed: "fail_closed",
}

// ErrUnknownSource is wrapped by the error returned for text that names no
// source.
var ErrUnknownSource = errors.New("unknown verdict source")

// String returns "read_only", "rule", "approver" or "fail_closed".
func (s Source) String() string {
	if s >= SourceReadOnly && s <= SourceFailClosed {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// MarshalText implements [encoding.TextMarshaler].
func (s Source) MarshalText() ([]byte, error) {
	if s < SourceReadOnly || s > SourceFailClosed {
		return nil, fmt.Errorf("%w: %d", ErrUnknownSource, int(s))
	}
	return []byte(sourceNames[s]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (s *Source) UnmarshalText(text []byte) error {
	for v := SourceReadOnly; v <= SourceFailClosed; v++ {
		if sourceNames[v] == string(text) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("%w: want one of read_only, rule, approver, fail_closed", ErrUnknownSource)
}

// Verdict is a gate's decision about one call, and where it came from.
type Verdict struct {
	// Allow reports whether the call may run.
	Allow bool `json:"allow"`
	// Reason says why. On a denial it is what the model reads.
	Reason string `json:"reason"`
	// Source is where the verdict came from.
	Source Source `json:"source"`
	// Rule is the deciding rule when Source is SourceRule: a copy.
	Rule *Rule `json:"rule,omitempty"`
	// Err is why a SourceFailClosed verdict was reached: the approver's
	// error, a *[PanicError], [ErrInvalidAnswer], [ErrNoApprover],
	// [context.Canceled] or [context.DeadlineExceeded]. It is for logs;
	// Reason is what the model reads.
	Err error `json:"-"`
}

// GateOptions configure a [Gate].
type GateOptions struct {
	// Rules are consulted before the approver, in this order: typically the
	// operator's rules, then the workspace's. A workspace-scoped allow rule
	// is refused.
	Rules []Rule
	// Timeout bounds each question to the approver; a question not answered
	// in time is a denial. Zero means no bound but the caller's context.
	Timeout time.Duration
}

// Gate decides whether each call may run. It is safe for concurrent use.
//
// In order: a call whose preview says it has no side effect passes
// unasked; then rules answer (fixed rules and the session's, by the
// precedence in the package documentation); then the approver is asked,
// under the timeout, with panics recovered. Anything that is not an answer
// is a denial whose reason says which (fail closed). A for-session answer
// becomes a session rule, so the same question is not asked twice — a
// remembered denial repeats its reason with nobody asked.
type Gate struct {
	approver Approver
	timeout  time.Duration
	fixed    *ruleSet

	mu      sync.RWMutex
	session *ruleSet
}

// NewGate returns a gate that asks a about what no rule answers. A nil a
// denies everything that reaches it. Every rule is checked and its pattern
// compiled here, once; an invalid rule or a workspace allow rule is an
// error (a *[RulesError]) naming the rule's position and tool.
func NewGate(a Approver, opts *GateOptions) (*Gate, error) {
	if opts == nil {
		opts = &GateOptions{}
	}
	if opts.Timeout < 0 {
		return nil, errors.New("approver: GateOptions.Timeout is negative; use 0 for no timeout")
	}
	g := &Gate{approver: a, timeout: opts.Timeout, fixed: newRuleSet(), session: newRuleSet()}
	for i, r := range opts.Rules {
		if err := r.Validate(); err != nil {
			err.(*RulesError).Index = i + 1
			return nil, err
		}
		if r.Scope == ScopeWorkspace && r.Allow {
			return nil, &RulesError{Index: i + 1, Tool: r.Tool, Problem: workspaceAllowProblem, Err: ErrWorkspaceAllow}
		}
		g.fixed.add(r, i)
	}
	return g, nil
}

// Authorize decides whether call, a call of tool described by preview, may
// run. It never returns without a verdict, and every verdict that is not an
// answer is a denial.
func (g *Gate) Authorize(ctx context.Context, tool string, call contract.Call, preview contract.Preview) Verdict {
	if !preview.SideEffect.Consequential() {
		return Verdict{Allow: true, Source: SourceReadOnly, Reason: fmt.Sprintf("tool %s only reads; it passes without asking", tool)}
	}
	subject := string(preview.Subject)
	if subject == "" {
		subject = "null" // a missing Subject is matched as JSON null
	}
	if v, ok := g.byRule(tool, subject); ok {
		return v
	}
	req := Request{CallID: call.ID, Tool: tool, Preview: preview, Input: call.Input}
	return g.ask(ctx, req, subject)
}

// SessionRules returns the rules this gate has made from for-session
// answers, oldest first.
func (g *Gate) SessionRules() []Rule {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.session.rules()
}

func (g *Gate) byRule(tool, subject string) (Verdict, bool) {
	g.mu.RLock()
	c := decide(subject, g.fixed.tools[tool], g.session.tools[tool])
	g.mu.RUnlock()
	if c == nil {
		return Verdict{}, false
	}
	return Verdict{Allow: c.rule.Allow, Reason: ruleReason(&c.rule), Source: SourceRule, Rule: c.copyRule()}, true
}

var ruleSources = map[Scope]string{
	ScopeOperator:  "an operator rule",
	ScopeWorkspace: "a workspace rule",
	ScopeSession:   "an answer remembered for this session",
}

// ruleReason is the rule's own reason, or one that says where the rule came
// from.
func ruleReason(r *Rule) string {
	if r.Reason != "" {
		return r.Reason
	}
	by := ruleSources[r.Scope]
	if by == "" {
		by = "a rule"
	}
	if r.Allow {
		return "allowed by " + by
	}
	return fmt.Sprintf("tool %s denied by %s", r.Tool, by)
}

// result is what came back from one question to the approver.
type result struct {
	answer Answer
	err    error
}

func (g *Gate) ask(ctx context.Context, req Request, subject string) Verdict {
	if g.approver == nil {
		return failClosed(req.Tool, "no approver is configured to ask", ErrNoApprover)
	}
	if ctx.Err() != nil {
		return g.stopped(ctx, req.Tool)
	}
	var actx context.Context
	var cancel context.CancelFunc
	if g.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, g.timeout)
	} else {
		actx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	// The approver runs in its own goroutine so that one which ignores its
	// context still cannot hold the call past the deadline; its late answer
	// lands in the buffered channel and is dropped.
	done := make(chan result, 1)
	approver := g.approver
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: &PanicError{Value: p, Stack: debug.Stack()}}
			}
		}()
		a, err := approver.Approve(actx, req)
		done <- result{answer: a, err: err}
	}()
	var res result
	select {
	case res = <-done:
	case <-actx.Done():
		return g.stopped(ctx, req.Tool)
	}
	// An answer that came after the deadline or the cancellation is not
	// taken: the approver may have answered only because it was stopped.
	if actx.Err() != nil {
		return g.stopped(ctx, req.Tool)
	}
	return g.verdict(req.Tool, subject, res)
}

// stopped is the verdict for a question cut short by the context or the
// gate's timeout.
func (g *Gate) stopped(parent context.Context, tool string) Verdict {
	switch err := parent.Err(); {
	case errors.Is(err, context.Canceled):
		return failClosed(tool, "the call was cancelled before the approver answered", err)
	case err != nil:
		return failClosed(tool, "the call's deadline passed before the approver answered", err)
	}
	return failClosed(tool, fmt.Sprintf("the approver did not answer within %s", g.timeout), context.DeadlineExceeded)
}

func (g *Gate) verdict(tool, subject string, res result) Verdict {
	var pe *PanicError
	switch {
	case errors.As(res.err, &pe):
		return failClosed(tool, "the approver panicked", res.err)
	case res.err != nil:
		return failClosed(tool, "no answer from the approver: "+oneLine(res.err.Error(), maxReasonDetail), res.err)
	case !res.answer.Decision.valid():
		return failClosed(tool, "the approver gave no decision", ErrInvalidAnswer)
	}
	a := res.answer
	if a.Decision.ForSession() {
		if err := a.Remember.check(); err != nil {
			return failClosed(tool, "the approver's answer cannot be remembered: "+err.Error(), fmt.Errorf("%w: %w", ErrInvalidAnswer, err))
		}
	}
	reason := a.Reason
	if reason == "" {
		if a.Decision.Allows() {
			reason = "allowed by the approver"
		} else {
			reason = fmt.Sprintf("tool %s denied by the approver", tool)
		}
	}
	if a.Decision.ForSession() && contract.ValidName(tool) {
		g.remember(sessionRule(tool, subject, a, reason))
	}
	return Verdict{Allow: a.Decision.Allows(), Reason: reason, Source: SourceApprover}
}

// sessionRule turns a for-session answer into the rule that remembers it:
// the exact subject, unless Remember widens it to the tool or a command
// prefix.
func sessionRule(tool, subject string, a Answer, reason string) Rule {
	r := Rule{Tool: tool, Allow: a.Decision.Allows(), Reason: reason, Scope: ScopeSession}
	switch {
	case a.Remember != nil && a.Remember.Tool:
	case a.Remember != nil && len(a.Remember.Command) > 0:
		r.Command = slices.Clone(a.Remember.Command)
	default:
		r.Subject = subject
	}
	return r
}

func (g *Gate) remember(r Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session.has(r) {
		return
	}
	g.session.add(r, len(g.fixed.all)+len(g.session.all))
}

func failClosed(tool, why string, err error) Verdict {
	return Verdict{Allow: false, Source: SourceFailClosed, Reason: fmt.Sprintf("tool %s denied: %s", tool, why), Err: err}
}

const workspaceAllowProblem = `"allow": true is refused here: a workspace may only deny, so that a repository cannot pre-approve its own tools; allow rules belong in the operator's rules file`
