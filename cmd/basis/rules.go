package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
	basisws "github.com/basis-go/basis/workspace"
)

const rulesUsage = "rules list | add | remove"

const rulesHelp = `Manages the operator's approval rules, kept in <config dir>/rules.json. A rule
answers for a tool from one source before any approver is asked:

  basis rules list
  basis rules add --tool NAME [--source PATH|builtin | --any-source]
                  [--pattern GLOB | --command 'WORDS…'] (--allow | --ask | --deny)
                  [--reason TEXT] [--match LINE]… [--not-match LINE]…
  basis rules remove N…            (numbers as rules list shows them)
  basis rules remove --tool NAME [--source PATH|builtin] [--pattern GLOB | --command 'WORDS…']
                  [--allow | --ask | --deny]

Every rule is bound to the source of the tool it is written for: the
manifest or MCP config that declares it (absolute, symlinks resolved), or
builtin for spawn. add takes the source from the tools this workspace has;
--source names one; --any-source binds the rule to every tool of that name,
from any repository. A rule for one repository's tool never answers for
another's.

--allow runs the call unasked; --ask always sends it to the approver, even
when an allow rule matches; --deny refuses it. The strictest matching rule
wins: deny, then ask, then allow.

--pattern is a glob over the call's preview subject (* any run, ? one
character). --command is an argv prefix matched against every simple command
of a spawn call, split into words as a shell would ('go test *'); a word
{a,b} is a choice of words (git {push,fetch} *). --match and --not-match give
command lines (or subjects, for a pattern rule) the rule must and must not
match; add refuses a rule whose examples disagree with it.

A workspace's own .basis/rules.json may only deny and ask; the
administrator's /etc/basis/rules.json comes before everything. rules list
shows every layer.
`

func cmdRules(ctx context.Context, g *globals, args []string, e *env) int {
	if len(args) == 0 {
		return usageErr(e, "rules: say list, add or remove\nusage: basis %s", rulesUsage)
	}
	switch args[0] {
	case "list":
		return cmdRulesList(ctx, g, args[1:], e)
	case "add":
		return cmdRulesAdd(ctx, g, args[1:], e)
	case "remove":
		return cmdRulesRemove(ctx, g, args[1:], e)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stdout, "usage: basis %s\n\n%s", rulesUsage, rulesHelp)
		return exitOK
	}
	if name, _, _ := strings.Cut(strings.TrimLeft(args[0], "-"), "="); strings.HasPrefix(args[0], "-") {
		if advice, global := globalFlagAdvice(name, "rules"); global {
			return usageErr(e, "%s", advice)
		}
	}
	return usageErr(e, "rules: unknown subcommand %q%s; say list, add or remove (basis rules --help)", args[0], didYouMean(args[0], []string{"list", "add", "remove"}))
}

func cmdRulesList(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("rules list", "rules list [--json]", `Lists every layer of rules: the administrator's, the operator's (numbered), then the workspace's.
An allow rule approves a tool as it was defined when the rule was made; one
whose tool here has changed since says what changed.

  --json   print {"rules": [...], "warnings": [...]}: each rule with its
           layer ("scope"), file and number, its "definition" and
           "digest", and "current": whether it matches the tool as loaded
           now (null when the rule is no allow rule, or its tool is not
           here), with "changes" when it does not
`)
	asJSON := c.fs.Bool("json", false, "")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	p, err := w.ws.Policy(ctx)
	if err != nil {
		return configErr(e, basisws.Problems(err))
	}
	states := w.ruleCurrency(ctx, p.Rules()) // parallel to p.Rules(): system, operator, workspace
	if *asJSON {
		return writeRulesJSON(e, p, states)
	}
	if len(p.System) > 0 {
		note := ""
		if p.NoOperatorAllowRules {
			note = "; operator allow rules are switched off"
		}
		fmt.Fprintf(e.stdout, "system rules (%s, nobody below may loosen them%s):\n", w.ws.SystemRulesPath(), note)
		for i, r := range p.System {
			fmt.Fprintf(e.stdout, "     %s\n", describeRule(r))
			printStale(e, r, states[i])
		}
	}
	file := w.ws.OperatorRules()
	if len(p.Operator) == 0 {
		fmt.Fprintf(e.stdout, "no operator rules in %s; add one with: basis rules add --tool NAME --allow\n", w.displayPath(file.Path))
	} else {
		fmt.Fprintf(e.stdout, "operator rules (%s):\n", w.displayPath(file.Path))
		for i, r := range p.Operator {
			fmt.Fprintf(e.stdout, "%3d  %s\n", r.Number, describeRule(r))
			printStale(e, r, states[len(p.System)+i])
		}
	}
	if len(p.Workspace) > 0 {
		fmt.Fprintf(e.stdout, "workspace rules (%s, deny and ask only; edit the file to change them):\n", approver.WorkspaceRulesFile)
		for _, r := range p.Workspace {
			fmt.Fprintf(e.stdout, "     %s\n", describeRule(r))
		}
	}
	for _, wn := range p.Warnings {
		fmt.Fprintf(e.stdout, "warning: %s\n", wn)
	}
	return exitOK
}

// ruleCurrency tells, for each of rules, whether an allow rule matches
// the definition of its tool as this workspace loads it now, and what
// changed if not (basisws.RuleStates). MCP servers are started only when
// an allow rule names an MCP tool.
func (w *workspace) ruleCurrency(ctx context.Context, rules []approver.Rule) []basisws.RuleState {
	w.mcpStart = mcpNone
	for _, r := range rules {
		if r.Decision == approver.RuleAllow && mcpRule(r) {
			w.mcpStart = mcpAll
		}
	}
	defer w.closeMCP()
	rt, _ := w.build(ctx, nil) // a workspace whose tools cannot be loaded tells less
	return basisws.RuleStates(ctx, rt, rules)
}

// printStale says, under a rule, what changed in its tool since it
// approved it. A rule that records no definition has its warning.
func printStale(e *env, r approver.Rule, c basisws.RuleState) {
	if len(r.Definition) > 0 && c.Current != nil && !*c.Current {
		// The changes quote the tool's manifest: escaped, so they cannot
		// redraw the listing.
		fmt.Fprintf(e.stdout, "       matches nothing now: the tool changed since it was approved: %s\n", display.Escape(strings.Join(c.Changes, "; ")))
	}
}

func writeRulesJSON(e *env, p *basisws.Policy, states []basisws.RuleState) int {
	out := struct {
		Rules    []basisws.RuleState `json:"rules"`
		Warnings []string            `json:"warnings"`
	}{Rules: append([]basisws.RuleState{}, states...), Warnings: []string{}}
	for _, wn := range p.Warnings {
		out.Warnings = append(out.Warnings, wn.String())
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return usageErr(e, "writing the list: %v", err)
	}
	return exitOK
}

// describeRule is a rule's one-line form plus its reason.
func describeRule(r approver.Rule) string {
	if r.Reason == "" {
		return r.String()
	}
	return fmt.Sprintf("%s  (%s)", r, r.Reason)
}

// ruleFlags are the flags that spell a rule.
type ruleFlags struct {
	tool, source, pattern, command, reason string
	anySource, allow, ask, deny            bool
	match, notMatch                        []string
}

func (f *ruleFlags) register(c *command, adding bool) {
	c.fs.StringVar(&f.tool, "tool", "", "")
	c.fs.StringVar(&f.source, "source", "", "")
	c.fs.StringVar(&f.pattern, "pattern", "", "")
	c.fs.StringVar(&f.command, "command", "", "")
	c.fs.BoolVar(&f.allow, "allow", false, "")
	c.fs.BoolVar(&f.ask, "ask", false, "")
	c.fs.BoolVar(&f.deny, "deny", false, "")
	if adding {
		c.fs.BoolVar(&f.anySource, "any-source", false, "")
		c.fs.StringVar(&f.reason, "reason", "", "")
		c.fs.Var((*stringList)(&f.match), "match", "")
		c.fs.Var((*stringList)(&f.notMatch), "not-match", "")
	}
}

// decision is the one of --allow, --ask and --deny given, or "", and
// how many were given.
func (f *ruleFlags) decision() (approver.RuleDecision, int) {
	var d []approver.RuleDecision
	for _, x := range []struct {
		set bool
		d   approver.RuleDecision
	}{{f.allow, approver.RuleAllow}, {f.ask, approver.RuleAsk}, {f.deny, approver.RuleDeny}} {
		if x.set {
			d = append(d, x.d)
		}
	}
	if len(d) == 0 {
		return "", 0
	}
	return d[0], len(d)
}

// words reads --command in the rule syntax: shell words, {a,b} choices.
func (f *ruleFlags) words() ([]approver.CommandWord, error) {
	if f.command == "" {
		return nil, nil
	}
	return approver.ParseCommand(f.command)
}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

var _ flag.Value = (*stringList)(nil)

func cmdRulesAdd(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("rules add", "rules add --tool NAME [--source PATH|builtin | --any-source] [--pattern GLOB | --command 'WORDS…'] (--allow | --ask | --deny) [--reason TEXT] [--match LINE]… [--not-match LINE]…", rulesHelp)
	var f ruleFlags
	f.register(c, true)
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	decision, n := f.decision()
	switch {
	case f.tool == "":
		return usageErr(e, "rules add: say which tool with --tool NAME")
	case n != 1:
		return usageErr(e, "rules add: say exactly one of --allow, --ask or --deny")
	case f.pattern != "" && f.command != "":
		return usageErr(e, "rules add: a rule has --pattern or --command, not both; add two rules")
	case f.source != "" && f.anySource:
		return usageErr(e, "rules add: say --source PATH or --any-source, not both")
	}
	words, err := f.words()
	if err != nil {
		return usageErr(e, "rules add: --command: %v", err)
	}
	if err := contract.CheckName(f.tool); err != nil {
		return usageErr(e, "rules add: --tool: %v", err)
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	source, def, err := w.ruleTarget(ctx, f.tool, f.source, f.anySource, decision == approver.RuleAllow)
	if err != nil {
		return usageErr(e, "rules add: %v", err)
	}
	r := approver.Rule{Tool: f.tool, Source: source, Pattern: f.pattern, Command: words, Decision: decision,
		Reason: f.reason, Match: f.match, NotMatch: f.notMatch, Definition: def, Scope: approver.ScopeOperator}
	if err := r.Validate(); err != nil {
		return usageErr(e, "rules add: %v", err)
	}
	if err := r.CheckExamples(); err != nil {
		return usageErr(e, "rules add: %v; nothing was saved", err)
	}
	added, rebound, err := w.ws.AddRule(ctx, r)
	if err != nil {
		return configErr(e, []error{err})
	}
	if !added {
		fmt.Fprintf(e.stdout, "already there: %s\n", describeRule(r))
		return exitOK
	}
	verb := "added"
	if rebound {
		verb = "rebound"
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", verb, describeRule(r))
	if f.anySource {
		fmt.Fprintf(e.stdout, "note: bound to any source, this rule answers for every tool named %s, from any repository, manifest or MCP server, including ones not written yet\n", f.tool)
	}
	return exitOK
}

// ruleTarget is the source a new rule is bound to — --any-source, an
// explicit --source, or the source of the tool of that name in this
// workspace's roster — and, for an allow rule, the definition of that
// tool as it is now, which the rule records (basisws.RuleTarget).
func (w *workspace) ruleTarget(ctx context.Context, tool, explicit string, any, allow bool) (string, json.RawMessage, error) {
	source := w.ws.RuleSource(explicit)
	if any {
		source = approver.AnySource
	}
	if source != "" && !allow {
		return source, nil, nil
	}
	w.mcpStart, w.mcpTool = mcpForTool, tool
	defer w.closeMCP()
	rt, errs := w.build(ctx, nil)
	if len(errs) > 0 {
		if source != "" {
			return "", nil, fmt.Errorf("cannot read this workspace's tools to record what %s is now (%v); an allow rule records the tool it approves, so fix that first", tool, errs[0])
		}
		return "", nil, fmt.Errorf("cannot read this workspace's tools to find where %s comes from (%v); fix that, or name the source with --source PATH", tool, errs[0])
	}
	source, def, err := basisws.RuleTarget(ctx, rt, tool, source, allow)
	var wrong *basisws.RuleSourceError
	switch {
	case errors.Is(err, runtime.ErrUnknownTool):
		if err, _ := w.mcpStartError(); err != nil {
			return "", nil, fmt.Errorf("%w: %s is not listed: %v; or name the source with --source PATH", errNoSuchTool, tool, err)
		}
		var names []string
		for _, d := range rt.Tools() {
			names = append(names, d.Name)
		}
		if allow {
			// An allow records the tool it approves: --source cannot
			// stand in for a tool that is not here.
			return "", nil, fmt.Errorf("%w: this workspace has no tool %s%s; run basis tools to see them, or add the rule in the workspace that has the tool (basis -C DIR rules add …)", errNoSuchTool, tool, didYouMean(tool, names))
		}
		return "", nil, fmt.Errorf("%w: this workspace has no tool %s%s; run basis tools to see them, or name the source with --source PATH", errNoSuchTool, tool, didYouMean(tool, names))
	case errors.As(err, &wrong) && wrong.Here == "":
		return "", nil, fmt.Errorf("%v; use --any-source", err)
	case errors.As(err, &wrong):
		return "", nil, fmt.Errorf("the tool %s here comes from %s, not %s; an allow rule records the definition of the tool it approves, so add it in the workspace where that tool is (basis -C DIR rules add …)", tool, sourceText(wrong.Here), wrong.Source)
	}
	return source, def, err
}

func cmdRulesRemove(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("rules remove", "rules remove N… | rules remove --tool NAME [--source PATH|builtin] [--pattern GLOB | --command 'WORDS…'] [--allow | --ask | --deny]", rulesHelp)
	var f ruleFlags
	f.register(c, false)
	args, code := c.parse(args, e)
	if code >= 0 {
		return code
	}
	var numbers []int
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 {
			return usageErr(e, "rules remove: %q is not a rule number; see the numbers with: basis rules list", a)
		}
		numbers = append(numbers, n)
	}
	decision, n := f.decision()
	switch {
	case len(numbers) > 0 && f.tool != "":
		return usageErr(e, "rules remove: give rule numbers or --tool, not both")
	case len(numbers) == 0 && f.tool == "":
		return usageErr(e, "rules remove: give rule numbers (basis rules list) or --tool NAME")
	case n > 1:
		return usageErr(e, "rules remove: say at most one of --allow, --ask or --deny")
	}
	words, err := f.words()
	if err != nil {
		return usageErr(e, "rules remove: --command: %v", err)
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	filter := basisws.RuleFilter{Tool: f.tool, Source: w.ws.RuleSource(f.source), Pattern: f.pattern, Command: words, Decision: decision}
	gone, err := w.ws.RemoveRules(ctx, numbers, filter)
	var none *basisws.NoRuleError
	if errors.As(err, &none) {
		return usageErr(e, "rules remove: %v; see them with: basis rules list", err)
	} else if err != nil {
		return configErr(e, []error{err})
	}
	if len(gone) == 0 {
		fmt.Fprintf(e.stderr, "basis: no rule matched, nothing was removed; see the rules with: basis rules list\n")
		return exitUsage
	}
	for _, r := range gone {
		fmt.Fprintf(e.stdout, "removed: %s\n", describeRule(r))
	}
	return exitOK
}

// errNoSuchTool reports a rule for a tool the roster does not have.
var errNoSuchTool = errors.New("no such tool")
