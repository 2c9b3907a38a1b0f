//go:build unix

package approver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Explanation is what rules alone say about one call, without asking any
// approver: for "basis explain" and for denial messages.
type Explanation struct {
	// ReadOnly: the call only reads, so it passes unasked.
	ReadOnly bool
	// Matches are the rules that match the call, in rule order.
	Matches []Rule
	// Inert are rules that would match but do not apply: bound to another
	// source or to none, or operator allows the system file turned off.
	Inert []Rule
	// Stale are allow rules that would match but approved another
	// definition of the tool.
	Stale []StaleRule
	// Decided reports whether a rule allows or denies the call; Verdict is
	// then what the gate would answer.
	Decided bool
	Verdict Verdict
	// Ask is the ask rule that sends an undecided call to the approver.
	Ask *Rule
	// Gap says what no rule covers when the rules do not allow the call.
	Gap string
	// Allow are the rules an "always" answer would save to allow the call.
	Allow []Rule
}

// Explain says what the gate's rules make of a call, asking nobody.
func (g *Gate) Explain(req Request) Explanation {
	var e Explanation
	if !req.Preview.SideEffect.Consequential() && !g.askReadOnly {
		e.ReadOnly = true
		e.Decided = true
		e.Verdict = Verdict{Allow: true, Source: SourceReadOnly, Reason: fmt.Sprintf("tool %s only reads; it passes without asking", req.Tool)}
		return e
	}
	subject := subjectOf(req.Preview)
	def := g.defs.of(req.Definition)
	commands, _ := subject.Commands()
	g.mu.RLock()
	// The system's rules are in fixed too; its layer shows in each rule's
	// Scope.
	for _, set := range []*ruleSet{g.fixed, g.session} {
		for _, c := range set.all {
			if c.rule.Tool != req.Tool {
				continue
			}
			m, ok := c.matches(subject.text, commands)
			if !ok {
				continue
			}
			switch {
			case c.off || !c.appliesTo(req.Source):
				e.Inert = append(e.Inert, m)
			case !c.covers(def):
				e.Stale = append(e.Stale, StaleRule{Rule: m, Changes: describeChanges(c.def, def)})
			default:
				e.Matches = append(e.Matches, m)
			}
		}
	}
	g.mu.RUnlock()
	switch won := g.ruling(req.Tool, req.Source, subject, def); {
	case won == nil:
	case won.rule.Decision == RuleAsk:
		e.Ask = won.copyRule()
		return e
	default:
		e.Decided, e.Verdict = true, ruleVerdict(won)
		if e.Verdict.Allow {
			return e
		}
	}
	e.Gap = g.gap(req.Tool, req.Source, subject, def)
	if !e.Decided {
		e.Allow = g.allowRules(req, subject)
	}
	return e
}

// stale returns the allow rules for tool from source that would match
// subject but approved another definition than def, in rule order, each
// with what changed: why a call that was allowed is asked about again.
// Only the tool's own rules for that source are looked at, through the
// index.
func (g *Gate) stale(tool, source string, subject *callSubject, def *definition) []StaleRule {
	commands, _ := subject.Commands()
	var found []*compiledRule
	consider := func(c *compiledRule) {
		if c.rule.Decision != RuleAllow || c.covers(def) {
			return
		}
		if _, ok := c.matches(subject.text, commands); ok {
			found = append(found, c)
		}
	}
	fixedExact, fixedAny := g.fixed.lookup(tool, source)
	g.mu.RLock()
	sessionExact, sessionAny := g.session.lookup(tool, source)
	for _, t := range []*toolRules{fixedExact, fixedAny, sessionExact, sessionAny} {
		if t == nil {
			continue
		}
		for _, c := range t.subject[subject.text] {
			consider(c)
		}
		for _, list := range [][]*compiledRule{t.patterns, t.commands, t.bare} {
			for _, c := range list {
				consider(c)
			}
		}
	}
	g.mu.RUnlock()
	slices.SortFunc(found, func(a, b *compiledRule) int { return cmp.Compare(a.seq, b.seq) })
	var out []StaleRule
	for _, c := range found {
		out = append(out, StaleRule{Rule: *c.copyRule(), Changes: describeChanges(c.def, def)})
	}
	return out
}

// appliesTo reports whether the rule can match a call from source.
func (c *compiledRule) appliesTo(source string) bool {
	r := &c.rule
	if !r.bound() {
		return false
	}
	k := keyOf(r)
	return k.source == AnySource || k.source == source
}

// matches reports whether the rule matches subject, leaving its source
// aside, and returns a copy of it.
func (c *compiledRule) matches(subject string, commands [][]string) (Rule, bool) {
	r := *c.copyRule()
	switch c.rule.kind() {
	case kindSubject:
		return r, c.rule.Subject == subject
	case kindPattern:
		return r, c.glob.match(subject)
	case kindCommand:
		return r, slices.ContainsFunc(commands, c.cmd.match)
	}
	return r, true
}

// gap says what the rules do not cover in a call they do not allow, or ""
// when the subject is not a command line: the first simple command no
// allow rule matches, or why the command line could not be analysed.
func (g *Gate) gap(tool, source string, subject *callSubject, def *definition) string {
	if !hasCommandsKey(subject.text) {
		return ""
	}
	commands, ok := subject.Commands()
	if !ok {
		why := unanalysable(subject.text)
		if why == "" {
			why = "no reason given"
		}
		return fmt.Sprintf("the command line could not be analysed (%s), so no command rule can allow it", oneLine(why, maxReasonDetail))
	}
	for _, argv := range g.uncovered(tool, source, def, commands) {
		return fmt.Sprintf("no rule allows the command %s", oneLine(strings.Join(argv, " "), maxReasonDetail))
	}
	return ""
}

// uncovered returns the commands no command allow rule for tool and source
// that approved definition def matches.
func (g *Gate) uncovered(tool, source string, def *definition, commands [][]string) [][]string {
	fixedExact, fixedAny := g.fixed.lookup(tool, source)
	g.mu.RLock()
	defer g.mu.RUnlock()
	sessionExact, sessionAny := g.session.lookup(tool, source)
	var out [][]string
	for _, argv := range commands {
		covered := false
		for _, t := range []*toolRules{fixedExact, fixedAny, sessionExact, sessionAny} {
			if t == nil {
				continue
			}
			for _, r := range t.commands {
				if r.rule.Decision == RuleAllow && r.covers(def) && r.cmd.match(argv) {
					covered = true
				}
			}
		}
		if !covered {
			out = append(out, argv)
		}
	}
	return out
}

// allowRules is what an "always" answer to the call would save: the
// rules the gate proposes to an approver ([Gate.propose]), or, when it
// proposes none, a pattern that matches exactly this subject.
func (g *Gate) allowRules(req Request, subject *callSubject) []Rule {
	if req.Source == "" || !validTool(req.Tool) {
		return nil
	}
	if out := g.propose(req, subject); len(out) > 0 {
		return out
	}
	return []Rule{{Tool: req.Tool, Source: req.Source, Decision: RuleAllow, Pattern: subjectPattern(subject.text)}}
}

func validTool(name string) bool { return (&Rule{Tool: name}).validTool() != "" }

// subjectPattern returns a pattern that matches subject: subject itself,
// with each '*' (which a pattern reads as any run) turned into '?' (any
// one character), so the pattern matches subject and, at most, subjects of
// the same length that differ from it where it has '*' or '?'.
func subjectPattern(subject string) string {
	return strings.ReplaceAll(subject, "*", "?")
}

// hasCommandsKey reports whether subject is an object with a top-level
// "commands" key: a subject about a command line.
func hasCommandsKey(subject string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(subject), &top) != nil {
		return false
	}
	_, ok := top["commands"]
	return ok
}

// unanalysable returns the subject's "unanalysable" string: why a tool
// could not analyse its command line.
func unanalysable(subject string) string {
	var top struct {
		Unanalysable string `json:"unanalysable"`
	}
	_ = json.Unmarshal([]byte(subject), &top)
	return top.Unanalysable
}

// AddCommand returns the "basis rules add …" command line that adds r to
// the operator's rules, quoted for a POSIX shell.
func (r Rule) AddCommand() string {
	var b strings.Builder
	b.WriteString("basis rules add --tool ")
	b.WriteString(shellQuote(r.Tool))
	switch r.Source {
	case "":
	case AnySource:
		b.WriteString(" --any-source")
	default:
		b.WriteString(" --source ")
		b.WriteString(shellQuote(r.Source))
	}
	switch r.kind() {
	case kindPattern:
		b.WriteString(" --pattern ")
		b.WriteString(shellQuote(r.Pattern))
	case kindCommand:
		b.WriteString(" --command ")
		b.WriteString(shellQuote(FormatCommand(r.Command)))
	case kindSubject:
		b.WriteString(" --pattern ")
		b.WriteString(shellQuote(subjectPattern(r.Subject)))
	}
	b.WriteString(" --")
	b.WriteString(string(r.Decision.or()))
	for _, ex := range r.Match {
		b.WriteString(" --match ")
		b.WriteString(shellQuote(ex))
	}
	for _, ex := range r.NotMatch {
		b.WriteString(" --not-match ")
		b.WriteString(shellQuote(ex))
	}
	if r.Reason != "" {
		b.WriteString(" --reason ")
		b.WriteString(shellQuote(r.Reason))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell, leaving words of plain
// characters as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
