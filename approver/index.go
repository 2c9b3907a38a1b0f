//go:build unix

package approver

import (
	"slices"
)

// compiledRule is a rule with its matcher built once, and its position in
// the gate's rule order (seq) for choosing among several that match.
type compiledRule struct {
	rule Rule
	seq  int
	glob glob
	cmd  commandPattern
	// def is an allow rule's Definition, parsed; nil when it records none.
	def *definition
	// off: the rule is listed but does not take part.
	off bool
}

// covers reports whether the rule can answer a call of a tool whose
// definition is def: deny and ask rules always can, an allow rule only
// when it approved that definition (or one the sandbox tightened since).
func (c *compiledRule) covers(def *definition) bool {
	return c.rule.Decision != RuleAllow || covers(c.def, def)
}

// copyRule returns a copy the caller may keep and change.
func (c *compiledRule) copyRule() *Rule {
	r := c.rule
	r.Command = cloneWords(r.Command)
	r.Match = slices.Clone(r.Match)
	r.NotMatch = slices.Clone(r.NotMatch)
	r.Definition = slices.Clone(r.Definition)
	return &r
}

func cloneWords(words []CommandWord) []CommandWord {
	if words == nil {
		return nil
	}
	out := make([]CommandWord, len(words))
	for i, w := range words {
		out[i] = slices.Clone(w)
	}
	return out
}

// toolRules are one tool's rules, by kind. Looking a tool up is one map
// access, so the cost of a decision depends on the rules of the tool being
// called, not on how many rules exist.
type toolRules struct {
	subject  map[string][]*compiledRule
	patterns []*compiledRule
	commands []*compiledRule
	bare     []*compiledRule
}

// toolKey is a tool's name and the source its rules are bound to.
type toolKey struct {
	tool, source string
}

// keyOf is where r is filed: rules bound to AnySource, and rules without a
// source that match every source (see [Rule.bound]), under AnySource.
func keyOf(r *Rule) toolKey {
	if r.Source == "" && r.Scope != ScopeSession {
		return toolKey{r.Tool, AnySource}
	}
	return toolKey{r.Tool, r.Source}
}

// ruleSet indexes rules by tool name and source.
type ruleSet struct {
	tools map[toolKey]*toolRules
	all   []*compiledRule
}

func newRuleSet() *ruleSet { return &ruleSet{tools: make(map[toolKey]*toolRules)} }

// lookup returns the rules that can match a call of tool from source: those
// bound to that source and those bound to any. Either may be nil.
func (s *ruleSet) lookup(tool, source string) (exact, anySource *toolRules) {
	if source != AnySource {
		exact = s.tools[toolKey{tool, source}]
	}
	return exact, s.tools[toolKey{tool, AnySource}]
}

// add compiles r, which must be valid, and files it under its tool and
// source. A rule bound to nothing is kept for listing but filed nowhere,
// so it matches nothing; so is one the caller says is off (an operator
// allow rule the system file turns off).
func (s *ruleSet) add(r Rule, seq int, off bool) {
	r.Command = cloneWords(r.Command)
	c := &compiledRule{rule: r, seq: seq, off: off}
	switch r.kind() {
	case kindPattern:
		c.glob = compileGlob(r.Pattern)
	case kindCommand:
		c.cmd = compileCommand(r.Command)
	}
	if r.Decision == RuleAllow {
		// Validated already: a definition that cannot be read is not
		// here.
		c.def, _ = parseDefinition(r.Definition)
	}
	s.all = append(s.all, c)
	if off || !r.bound() {
		return
	}
	key := keyOf(&r)
	t := s.tools[key]
	if t == nil {
		t = &toolRules{}
		s.tools[key] = t
	}
	switch r.kind() {
	case kindSubject:
		if t.subject == nil {
			t.subject = make(map[string][]*compiledRule)
		}
		t.subject[r.Subject] = append(t.subject[r.Subject], c)
	case kindPattern:
		t.patterns = append(t.patterns, c)
	case kindCommand:
		t.commands = append(t.commands, c)
	case kindTool:
		t.bare = append(t.bare, c)
	}
}

// has reports whether a rule matching exactly what r matches, with the same
// answer, is already in the set.
func (s *ruleSet) has(r Rule) bool {
	for _, c := range s.all {
		if sameRule(c.rule, r) && c.rule.Subject == r.Subject && sameDefinition(c.rule.Definition, r.Definition) {
			return true
		}
	}
	return false
}

func (s *ruleSet) rules() []Rule {
	out := make([]Rule, len(s.all))
	for i, c := range s.all {
		out[i] = *c.copyRule()
	}
	return out
}

// choice collects, among the rules that match, the first deny, ask and
// allow in rule order.
type choice struct {
	deny, ask, allow *compiledRule
}

func (c *choice) consider(r *compiledRule) {
	var slot **compiledRule
	switch r.rule.Decision {
	case RuleAllow:
		slot = &c.allow
	case RuleAsk:
		slot = &c.ask
	default:
		slot = &c.deny
	}
	if *slot == nil || r.seq < (*slot).seq {
		*slot = r
	}
}

// winner applies "deny beats ask beats allow" within one level of
// specificity.
func (c *choice) winner() *compiledRule {
	switch {
	case c.deny != nil:
		return c.deny
	case c.ask != nil:
		return c.ask
	}
	return c.allow
}

// decide returns the rule that answers a call of one tool with this
// subject and definition, or nil when none does. sets are that tool's
// rules from each source; a nil entry is skipped. An allow rule approved
// for another definition does not answer.
//
// Specific rules (an exact subject, a pattern, a command) are consulted
// first, and only when none of them matches are bare tool rules. At either
// level a matching deny beats a matching ask, which beats a matching
// allow, and among several of the same answer the first in rule order
// wins.
func decide(subject *callSubject, def *definition, sets ...*toolRules) *compiledRule {
	var specific choice
	hasCommandRules := false
	for _, t := range sets {
		if t == nil {
			continue
		}
		for _, r := range t.subject[subject.text] {
			if r.covers(def) {
				specific.consider(r)
			}
		}
		for _, r := range t.patterns {
			if r.covers(def) && r.glob.match(subject.text) {
				specific.consider(r)
			}
		}
		hasCommandRules = hasCommandRules || len(t.commands) > 0
	}
	if hasCommandRules {
		decideCommands(subject, def, &specific, sets)
	}
	if w := specific.winner(); w != nil {
		return w
	}
	var bare choice
	for _, t := range sets {
		if t == nil {
			continue
		}
		for _, r := range t.bare {
			if r.covers(def) {
				bare.consider(r)
			}
		}
	}
	return bare.winner()
}

// decideCommands applies command rules: any command matched by a deny rule
// denies; any matched by an ask rule asks; the call is allowed only when
// every command is matched by some allow rule. A Subject without a usable
// "commands" list matches no command rule.
func decideCommands(subject *callSubject, def *definition, specific *choice, sets []*toolRules) {
	commands, ok := subject.Commands()
	if !ok {
		return
	}
	var first *compiledRule // the allow rule that covers the first command
	allCovered := true
	for i, argv := range commands {
		var covered choice
		for _, t := range sets {
			if t == nil {
				continue
			}
			for _, r := range t.commands {
				if r.covers(def) && r.cmd.match(argv) {
					covered.consider(r)
				}
			}
		}
		if covered.deny != nil {
			specific.consider(covered.deny)
		}
		if covered.ask != nil {
			specific.consider(covered.ask)
		}
		if covered.allow == nil {
			allCovered = false
		} else if i == 0 {
			first = covered.allow
		}
	}
	if allCovered && first != nil {
		specific.consider(first)
	}
}
