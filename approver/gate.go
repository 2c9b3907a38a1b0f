//go:build unix

package approver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/contract"
)

// Source says where a [Verdict] came from.
type Source string

const (
	// SourceReadOnly: the call only reads and passed unasked.
	SourceReadOnly Source = "read_only"
	// SourceRule: a rule answered; [Verdict.Rule] is the one.
	SourceRule Source = "rule"
	// SourceApprover: the approver answered.
	SourceApprover Source = "approver"
	// SourceFailClosed: nothing answered, and the call is denied;
	// [Verdict.Err] says why.
	SourceFailClosed Source = "fail_closed"
)

var sources = []Source{SourceReadOnly, SourceRule, SourceApprover, SourceFailClosed}

// MarshalText refuses the zero value and any word that is no source.
func (s Source) MarshalText() ([]byte, error) { return marshalEnum(s, "verdict source", sources) }

// UnmarshalText accepts only the words of the constants above.
func (s *Source) UnmarshalText(text []byte) error {
	return unmarshalEnum(s, text, "verdict source", sources)
}

// Verdict is a gate's decision about one call, and where it came from.
type Verdict struct {
	// Allow reports whether the call may run.
	Allow bool `json:"allow"`
	// Reason says why; on a denial it is what the model reads.
	Reason string `json:"reason"`
	// Source is where the verdict came from.
	Source Source `json:"source"`
	// Rule is the deciding rule, or the ask rule that sent the call to the
	// approver.
	Rule *Rule `json:"rule,omitempty"`
	// Err is why a SourceFailClosed verdict was reached, for logs.
	Err error `json:"-"`
	// SavedTo is where an "always" answer was saved as a rule; SaveErr is
	// why it could not be (it then holds for the session only).
	SavedTo string `json:"saved_to,omitempty"`
	SaveErr error  `json:"-"`
}

// GateOptions configure a [Gate].
type GateOptions struct {
	// Rules are consulted before the approver, typically the system's,
	// the operator's, then the workspace's. A workspace allow rule is
	// refused.
	Rules []Rule
	// NoOperatorAllowRules makes operator allow rules match nothing and
	// stops "always allow" answers being saved ([Rules]).
	NoOperatorAllowRules bool
	// AskReadOnly turns off the passing of calls whose side effect is
	// none: they are judged by the rules and asked about like any other.
	// A host sets it when the system's or the operator's rules file says
	// "ask_read_only": true ([Rules.AskReadOnly]); no other layer's false
	// undoes it.
	AskReadOnly bool
	// Timeout bounds each question to the approver; zero: only the
	// caller's context.
	Timeout time.Duration
	// Save writes an answer the approver marked [Answer.Persist] as a rule
	// and says where ([RulesFile.Save] fits). Nil: the session only.
	Save func(Rule) (where string, err error)
}

// Gate decides whether each call may run: reads pass, then rules answer,
// then the approver is asked, and anything that is not an answer is a
// denial. A for-session answer becomes a session rule. It is safe for
// concurrent use.
type Gate struct {
	approver         Approver
	timeout          time.Duration
	save             func(Rule) (string, error)
	noOperatorAllows bool
	askReadOnly      bool
	// system holds the system layer's rules, whose deny and ask nothing
	// overrides; fixed holds every fixed rule, system allows included.
	system *ruleSet
	fixed  *ruleSet
	// defs are the requests' definitions, parsed once each.
	defs definitions

	mu      sync.RWMutex
	session *ruleSet
}

// NewGate returns a gate that asks a about what no rule answers (nil: deny).
// An invalid rule or a workspace allow rule is a *[configfile.Error].
func NewGate(a Approver, opts *GateOptions) (*Gate, error) {
	if opts == nil {
		opts = &GateOptions{}
	}
	if opts.Timeout < 0 {
		return nil, errors.New("approver: GateOptions.Timeout is negative; use 0 for no timeout")
	}
	g := &Gate{approver: a, timeout: opts.Timeout, save: opts.Save, noOperatorAllows: opts.NoOperatorAllowRules, askReadOnly: opts.AskReadOnly,
		system: newRuleSet(), fixed: newRuleSet(), session: newRuleSet()}
	for i, r := range opts.Rules {
		if err := r.Validate(); err != nil {
			return nil, renumber(err, i+1, r.validTool())
		}
		if r.Scope == ScopeWorkspace && r.Decision == RuleAllow {
			return nil, ruleError("", 0, 0, i+1, r.Tool, workspaceAllowProblem)
		}
		if r.Scope == ScopeSystem {
			g.system.add(r, i, false)
		}
		g.fixed.add(r, i, g.operatorAllowOff(&r))
	}
	return g, nil
}

// AsksReadOnly reports whether calls whose side effect is none are asked
// about ([GateOptions.AskReadOnly]): a runtime then gets their
// definition for the rules, as it does for any other call.
func (g *Gate) AsksReadOnly() bool { return g.askReadOnly }

// operatorAllowOff reports whether r is an operator allow rule the system
// layer turned off.
func (g *Gate) operatorAllowOff(r *Rule) bool {
	return g.noOperatorAllows && r.Scope.or() == ScopeOperator && r.Decision == RuleAllow
}

// Authorize decides whether the call req describes may run. Every verdict
// that is not an answer is a denial.
func (g *Gate) Authorize(ctx context.Context, req Request) Verdict {
	if !req.Preview.SideEffect.Consequential() && !g.askReadOnly {
		return Verdict{Allow: true, Source: SourceReadOnly, Reason: fmt.Sprintf("tool %s only reads; it passes without asking", req.Tool)}
	}
	subject := subjectOf(req.Preview)
	def := g.defs.of(req.Definition)
	won := g.ruling(req.Tool, req.Source, subject, def)
	if won != nil && won.rule.Decision != RuleAsk {
		return ruleVerdict(won)
	}
	req.Proposed = g.propose(req, subject)
	req.Stale = g.stale(req.Tool, req.Source, subject, def)
	v := g.ask(ctx, req, subject, won)
	if v.Source == SourceFailClosed {
		v.Reason = g.withGap(v.Reason, req, subject, won)
	}
	if won != nil {
		v.Rule = won.copyRule()
	}
	return v
}

// withGap adds to a denial's reason why the approver was asked: the ask
// rule that sent the call, or what the rules do not cover, so the reader
// learns which command to allow, or why none can be.
func (g *Gate) withGap(reason string, req Request, subject *callSubject, askRule *compiledRule) string {
	if askRule != nil {
		return fmt.Sprintf("%s; it was asked about because %s (%s) asks about every such call", reason, ruleOrigin(&askRule.rule), askRule.rule.String())
	}
	if len(req.Stale) > 0 {
		// The first rule that would have allowed it, in rule order: what
		// changed is what the reader needs, once.
		reason += "; " + req.Stale[0].String()
	}
	if gap := g.gap(req.Tool, req.Source, subject, g.defs.of(req.Definition)); gap != "" {
		return reason + "; " + gap
	}
	return reason
}

// subjectText is the Subject as rules match it; a missing one is JSON null.
func subjectText(p contract.Preview) string {
	if len(p.Subject) == 0 {
		return "null"
	}
	return string(p.Subject)
}

// callSubject is a call's Subject as the rules match it: its text, and
// the "commands" list in it, read at most once however many steps of a
// decision (the ruling, the proposals, the stale rules, the gap) look at
// it.
type callSubject struct {
	text     string
	once     sync.Once
	commands [][]string
	ok       bool
}

func subjectOf(p contract.Preview) *callSubject {
	return &callSubject{text: subjectText(p)}
}

// Commands is subjectCommands of the text, read at the first call.
func (s *callSubject) Commands() ([][]string, bool) {
	s.once.Do(func() { s.commands, s.ok = subjectCommands(s.text) })
	return s.commands, s.ok
}

// SessionRules returns the rules made from for-session answers, oldest first.
func (g *Gate) SessionRules() []Rule {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.session.rules()
}

// ruling is the rule that decides a call, or nil when none does; an ask
// rule sends the call to the approver. The system layer is judged on its
// own first: its deny stands whatever else matches, and its ask stands
// unless another rule denies. Otherwise every rule is judged together.
func (g *Gate) ruling(tool, source string, subject *callSubject, def *definition) *compiledRule {
	sysExact, sysAny := g.system.lookup(tool, source)
	sys := decide(subject, def, sysExact, sysAny)
	if sys != nil && sys.rule.Decision.or() == RuleDeny {
		return sys
	}
	fixedExact, fixedAny := g.fixed.lookup(tool, source)
	g.mu.RLock()
	sessionExact, sessionAny := g.session.lookup(tool, source)
	all := decide(subject, def, fixedExact, fixedAny, sessionExact, sessionAny)
	g.mu.RUnlock()
	if sys != nil && sys.rule.Decision == RuleAsk && (all == nil || all.rule.Decision.or() != RuleDeny) {
		return sys
	}
	return all
}

func ruleVerdict(c *compiledRule) Verdict {
	return Verdict{Allow: c.rule.Decision == RuleAllow, Reason: ruleReason(&c.rule), Source: SourceRule, Rule: c.copyRule()}
}

var ruleSources = map[Scope]string{
	ScopeOperator:  "an operator rule",
	ScopeWorkspace: "a workspace rule",
	ScopeSession:   "an answer remembered for this session",
	ScopeSystem:    "a system rule",
}

// ruleReason is the rule's own reason, or one that says where the rule came
// from; a denial then names the rule, so the reader knows what to change.
func ruleReason(r *Rule) string {
	if r.Decision == RuleAllow {
		if r.Reason != "" {
			return r.Reason
		}
		return "allowed by " + ruleOrigin(r)
	}
	if r.Reason != "" {
		return named(r.Tool, r.Reason)
	}
	return fmt.Sprintf("tool %s denied by %s (%s)", r.Tool, ruleOrigin(r), r)
}

// named puts the tool's name before a denial's reason that does not say
// it ("tool deploy denied: deploys go through the release train"), so a
// reader of the one line knows which call it was.
func named(tool, reason string) string {
	if strings.HasPrefix(reason, "tool "+tool+" ") || strings.HasPrefix(reason, tool+" ") {
		return reason // it names the tool already
	}
	return fmt.Sprintf("tool %s denied: %s", tool, reason)
}

// ruleOrigin says which rule: "operator rule 3 in /home/u/.config/basis/rules.json",
// or the scope's words when the rule was not loaded from a file.
func ruleOrigin(r *Rule) string {
	if r.File != "" && r.Number > 0 {
		return fmt.Sprintf("%s rule %d in %s", r.Scope.or(), r.Number, r.File)
	}
	if by := ruleSources[r.Scope.or()]; by != "" {
		return by
	}
	return "a rule"
}

// result is what came back from one question to the approver.
type result struct {
	answer Answer
	err    error
}

func (g *Gate) ask(ctx context.Context, req Request, subject *callSubject, askRule *compiledRule) Verdict {
	if g.approver == nil {
		return failClosed(req.Tool, "no approver is configured to ask", errNoApprover)
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
	// lands in the buffered channel and is dropped. One that answers at
	// once is asked here: the goroutine would cost a switch of threads.
	done := make(chan result, 1)
	approver := g.approver
	askApprover := func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: &panicError{Value: p, Stack: debug.Stack()}}
			}
		}()
		a, err := approver.Approve(actx, req)
		done <- result{answer: a, err: err}
	}
	var res result
	if IsImmediate(approver) {
		askApprover()
		res = <-done
	} else {
		go askApprover()
		select {
		case res = <-done:
		case <-actx.Done():
			return g.stopped(ctx, req.Tool)
		}
	}
	// An answer that came after the deadline or the cancellation is not
	// taken: the approver may have answered only because it was stopped.
	if actx.Err() != nil {
		return g.stopped(ctx, req.Tool)
	}
	return g.verdict(req, subject, res, askRule)
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

func (g *Gate) verdict(req Request, subject *callSubject, res result, askRule *compiledRule) Verdict {
	tool := req.Tool
	var pe *panicError
	switch {
	case errors.As(res.err, &pe):
		return failClosed(tool, "the approver panicked", res.err)
	case res.err != nil:
		return failClosed(tool, "no answer from the approver: "+oneLine(res.err.Error(), maxReasonDetail), res.err)
	case !res.answer.Decision.valid():
		return failClosed(tool, "the approver gave no decision", errInvalidAnswer)
	}
	a := res.answer
	if a.Decision.ForSession() {
		if err := a.Remember.check(); err != nil {
			return failClosed(tool, "the approver's answer cannot be remembered: "+err.Error(), fmt.Errorf("%w: %w", errInvalidAnswer, err))
		}
	}
	reason := a.Reason
	switch {
	case reason == "" && a.Decision.Allows():
		reason = "allowed by the approver"
	case reason == "":
		reason = fmt.Sprintf("tool %s denied by the approver", tool)
	}
	if !a.Decision.Allows() {
		reason = g.withGap(reason, req, subject, askRule)
	}
	v := Verdict{Allow: a.Decision.Allows(), Reason: reason, Source: SourceApprover}
	if !v.Allow {
		// A rule saved from the answer keeps the approver's own words.
		v.Reason = named(tool, reason)
	}
	if !a.Decision.ForSession() || !contract.ValidName(tool) {
		return v
	}
	if askRule != nil && a.Decision.Allows() {
		// A remembered allow could never beat the ask rule: it asks about
		// every such call, by design.
		v.Reason += fmt.Sprintf("; %s asks about every such call, so this answer holds for this call only", ruleOrigin(&askRule.rule))
		return v
	}
	rules := sessionRules(req, subject.text, g.defs.of(req.Definition), a, reason)
	for _, r := range rules {
		g.remember(r)
	}
	if a.Persist {
		g.persist(&v, rules)
	}
	return v
}

// persist saves session rules as operator rules through the gate's Save,
// and says in the verdict where they went — or why they could not, in
// which case the answer still holds for the session.
func (g *Gate) persist(v *Verdict, rules []Rule) {
	var err error
	saved := 0
	for _, r := range rules {
		r.Scope = ScopeOperator
		switch {
		case g.save == nil:
			err = errNoSave
		case r.Source == "":
			err = fmt.Errorf("%w: tool %s has no source to bind a rule to", errNoSave, r.Tool)
		case g.operatorAllowOff(&r):
			err = fmt.Errorf("%w: the system rules file allows no operator allow rules", errNoSave)
		default:
			var where string
			if where, err = g.save(r); err == nil {
				v.SavedTo = where
				saved++
				continue
			}
		}
		break
	}
	if err == nil {
		if saved == 1 {
			v.Reason += "; saved as a rule in " + v.SavedTo
		} else {
			v.Reason += fmt.Sprintf("; saved as %d rules in %s", saved, v.SavedTo)
		}
		return
	}
	v.SaveErr = err
	v.Reason += "; kept for this session only, not saved: " + oneLine(err.Error(), maxReasonDetail)
}

// sessionRules turn a for-session answer into the rules that remember it,
// bound to the call's source: the exact subject, unless Remember widens it
// to the tool, a command prefix, or the rules the gate proposed. A rule to
// be saved cannot hold an exact subject; the subject becomes a pattern
// that matches it (see [subjectPattern]). An allow records the tool's
// definition (def), so that it holds only while the tool stays what was
// approved.
func sessionRules(req Request, subject string, def *definition, a Answer, reason string) []Rule {
	decision := RuleDeny
	var approved json.RawMessage
	if a.Decision.Allows() {
		// An allow's reason is only kept when the approver gave one: the
		// default words would be saved into rules files as noise.
		decision, reason = RuleAllow, a.Reason
		if def != nil {
			approved = json.RawMessage(def.canonical)
		}
	}
	r := Rule{Tool: req.Tool, Source: req.Source, Decision: decision, Reason: reason, Definition: approved, Scope: ScopeSession}
	switch {
	case a.Remember != nil && a.Remember.Tool:
	case a.Remember != nil && len(a.Remember.Command) > 0:
		r.Command = Words(a.Remember.Command...)
	case a.Remember != nil && a.Remember.Proposed && len(req.Proposed) > 0:
		out := make([]Rule, len(req.Proposed))
		for i, p := range req.Proposed {
			p.Decision, p.Reason, p.Scope, p.Definition = decision, reason, ScopeSession, approved
			p.Command = cloneWords(p.Command)
			out[i] = p
		}
		return out
	case a.Persist:
		r.Pattern = subjectPattern(subject)
	default:
		r.Subject = subject
	}
	return []Rule{r}
}

func (g *Gate) remember(r Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session.has(r) {
		return
	}
	g.session.add(r, len(g.fixed.all)+len(g.session.all), false)
}

func failClosed(tool, why string, err error) Verdict {
	return Verdict{Allow: false, Source: SourceFailClosed, Reason: fmt.Sprintf("tool %s denied: %s", tool, why), Err: err}
}

const workspaceAllowProblem = `an allow rule is refused here: a workspace may only deny or ask, so that a repository cannot pre-approve its own tools; allow rules belong in the operator's rules file`
