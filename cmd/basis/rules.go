package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/basis-go/basis/approver"
)

const rulesUsage = "rules list | add | remove"

const rulesHelp = `Manages the operator's approval rules, kept in <config dir>/rules.json. A rule
answers for a tool before any approver is asked:

  basis rules list
  basis rules add --tool NAME [--pattern GLOB | --command 'WORDS…'] (--allow | --deny) [--reason TEXT]
  basis rules remove N…            (numbers as rules list shows them)
  basis rules remove --tool NAME [--pattern GLOB | --command 'WORDS…'] [--allow | --deny]

--pattern is a glob over the call's preview subject (* any run, ? one
character); --command is an argv prefix matched against each command a spawn
call would run, split on spaces ('go test *'). A workspace's own
.basis/rules.json may only deny; rules list shows its rules too.
`

func cmdRules(ctx context.Context, g *globals, args []string, e *env) int {
	if len(args) == 0 {
		return usageErr(e, "rules: say list, add or remove\nusage: basis %s", rulesUsage)
	}
	switch args[0] {
	case "list":
		return cmdRulesList(g, args[1:], e)
	case "add":
		return cmdRulesAdd(g, args[1:], e)
	case "remove":
		return cmdRulesRemove(g, args[1:], e)
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

func cmdRulesList(g *globals, args []string, e *env) int {
	c := newCommand("rules list", "rules list", "Lists the operator's rules, numbered, then the workspace's deny rules.\n")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	file := w.operatorRules()
	operator, err := file.List()
	if err != nil {
		return configErr(e, []error{err})
	}
	ws, err := approver.LoadWorkspaceRules(w.workspaceRulesPath())
	if err != nil {
		return configErr(e, []error{err})
	}
	if len(operator) == 0 {
		fmt.Fprintf(e.stdout, "no operator rules in %s; add one with: basis rules add --tool NAME --allow\n", w.displayPath(file.Path))
	} else {
		fmt.Fprintf(e.stdout, "operator rules (%s):\n", w.displayPath(file.Path))
		for i, r := range operator {
			fmt.Fprintf(e.stdout, "%3d  %s\n", i+1, describeRule(r))
		}
	}
	if len(ws) > 0 {
		fmt.Fprintf(e.stdout, "workspace rules (%s, deny only; edit the file to change them):\n", approver.WorkspaceRulesFile)
		for _, r := range ws {
			fmt.Fprintf(e.stdout, "     %s\n", describeRule(r))
		}
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
	tool, pattern, command, reason string
	allow, deny                    bool
}

func (f *ruleFlags) register(c *command, withReason bool) {
	c.fs.StringVar(&f.tool, "tool", "", "")
	c.fs.StringVar(&f.pattern, "pattern", "", "")
	c.fs.StringVar(&f.command, "command", "", "")
	c.fs.BoolVar(&f.allow, "allow", false, "")
	c.fs.BoolVar(&f.deny, "deny", false, "")
	if withReason {
		c.fs.StringVar(&f.reason, "reason", "", "")
	}
}

func cmdRulesAdd(g *globals, args []string, e *env) int {
	c := newCommand("rules add", "rules add --tool NAME [--pattern GLOB | --command 'WORDS…'] (--allow | --deny) [--reason TEXT]", rulesHelp)
	var f ruleFlags
	f.register(c, true)
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	switch {
	case f.tool == "":
		return usageErr(e, "rules add: say which tool with --tool NAME")
	case f.allow == f.deny:
		return usageErr(e, "rules add: say exactly one of --allow or --deny")
	case f.pattern != "" && f.command != "":
		return usageErr(e, "rules add: a rule has --pattern or --command, not both; add two rules")
	}
	r := approver.Rule{Tool: f.tool, Pattern: f.pattern, Command: strings.Fields(f.command), Allow: f.allow, Reason: f.reason, Scope: approver.ScopeOperator}
	if err := r.Validate(); err != nil {
		return usageErr(e, "rules add: %v", err)
	}
	w, err := openWorkspace(g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	file := w.operatorRules()
	if err := file.Add(r); err != nil {
		return configErr(e, []error{err})
	}
	fmt.Fprintf(e.stdout, "added: %s\n", describeRule(r))
	return exitOK
}

func cmdRulesRemove(g *globals, args []string, e *env) int {
	c := newCommand("rules remove", "rules remove N… | rules remove --tool NAME [--pattern GLOB | --command 'WORDS…'] [--allow | --deny]", rulesHelp)
	var f ruleFlags
	f.register(c, false)
	args, code := c.parse(args, e)
	if code >= 0 {
		return code
	}
	byNumber := map[int]bool{}
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 {
			return usageErr(e, "rules remove: %q is not a rule number; see the numbers with: basis rules list", a)
		}
		byNumber[n-1] = true
	}
	switch {
	case len(byNumber) > 0 && f.tool != "":
		return usageErr(e, "rules remove: give rule numbers or --tool, not both")
	case len(byNumber) == 0 && f.tool == "":
		return usageErr(e, "rules remove: give rule numbers (basis rules list) or --tool NAME")
	case f.allow && f.deny:
		return usageErr(e, "rules remove: say at most one of --allow or --deny")
	}
	w, err := openWorkspace(g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	file := w.operatorRules()
	if len(byNumber) > 0 {
		current, err := file.List()
		if err != nil {
			return configErr(e, []error{err})
		}
		for n := range byNumber {
			if n >= len(current) {
				return usageErr(e, "rules remove: there is no rule %d (there are %d); see them with: basis rules list", n+1, len(current))
			}
		}
	}
	command := strings.Fields(f.command)
	var gone []approver.Rule
	removed, err := file.Remove(func(i int, r approver.Rule) bool {
		var match bool
		if len(byNumber) > 0 {
			match = byNumber[i]
		} else {
			match = r.Tool == f.tool && r.Pattern == f.pattern && strings.Join(r.Command, " ") == strings.Join(command, " ") &&
				(!f.allow || r.Allow) && (!f.deny || !r.Allow)
		}
		if match {
			gone = append(gone, r)
		}
		return match
	})
	if err != nil {
		return configErr(e, []error{err})
	}
	if removed == 0 {
		fmt.Fprintf(e.stderr, "basis: no rule matched, nothing was removed; see the rules with: basis rules list\n")
		return exitUsage
	}
	for _, r := range gone {
		fmt.Fprintf(e.stdout, "removed: %s\n", describeRule(r))
	}
	return exitOK
}
