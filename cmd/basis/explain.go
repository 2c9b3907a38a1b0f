package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
)

func cmdExplain(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("explain", "explain NAME [JSON | @FILE | -]",
		`Shows what a call would do, without running it or asking anyone: the tool's
preview (summary, side effect, subject), every rule that matches it and the
layer it comes from, what the rules decide, and — when they do not allow it —
what no rule covers and the basis rules add that "always" would save. A
call that runs git is warned about what the repository's git config makes
git run.

Exit status: 0 the rules would let it run (or it only reads), 3 it would be
refused or would need an approver's answer, 2 usage or configuration error.
`)
	name, input, w, code := c.callTarget(ctx, g, args, e)
	if code >= 0 {
		return code
	}
	// The approver is never asked: explain only reads the rules.
	gate, errs := w.newGate(ctx, approver.DenyAll())
	if len(errs) > 0 {
		return configErr(e, errs)
	}
	w.mcpStart, w.mcpTool = mcpForTool, name
	defer w.closeMCP()
	rt, errs := w.build(ctx, &runtime.Options{Gate: gate})
	if errs != nil {
		return configErr(e, errs)
	}
	ctx = contract.WithDelegationDepth(ctx, w.depth)
	ex := rt.Explain(ctx, name, contract.Call{ID: "explain", Input: input})
	out := e.stdout
	// Everything shown comes from a tool, a manifest, a rules file or the
	// input: escaped, so none of it changes how the rest reads.
	show := display.Escape
	if ex.Refusal != nil {
		fmt.Fprintf(out, "refused before the gate (%s): %s\n", ex.Refusal.Stage, show(ex.Refusal.Text))
		return exitRefused
	}
	p := ex.Preview
	fmt.Fprintf(out, "tool:        %s (from %s)\n", show(name), show(sourceText(ex.Request.Source)))
	fmt.Fprintf(out, "would:       %s\n", show(p.Summary))
	fmt.Fprintf(out, "side effect: %s\n", p.SideEffect)
	fmt.Fprintf(out, "subject:     %s\n", show(string(p.Subject)))
	if line := w.ws.SandboxRefusal(name, p.Dir, w.declared); line != "" {
		fmt.Fprintf(out, "if it fails: %s\n", show(line))
	}
	for _, warning := range w.ws.CallGitWarnings(ctx, ex.Request) {
		fmt.Fprintf(out, "warning:     %s\n", show(warning))
	}
	rules := ex.Rules
	if rules.ReadOnly {
		fmt.Fprintln(out, "verdict:     runs unasked: the call only reads, so no rule is consulted")
		return exitOK
	}
	if len(rules.Matches) == 0 {
		fmt.Fprintln(out, "rules:       none matches")
	} else {
		fmt.Fprintln(out, "rules that match:")
		for _, m := range rules.Matches {
			fmt.Fprintf(out, "  %-9s %s\n", string(m.Scope)+":", show(describeRule(m)))
		}
	}
	for _, r := range rules.Inert {
		fmt.Fprintf(out, "  not used:  %s\n", show(describeRule(r)))
	}
	for _, st := range rules.Stale {
		fmt.Fprintf(out, "  changed:   %s %s approved the tool as it was; since then: %s\n", string(st.Rule.Scope)+":", show(describeRule(st.Rule)), show(strings.Join(st.Changes, "; ")))
	}
	code = exitRefused
	switch {
	case rules.Decided && rules.Verdict.Allow:
		fmt.Fprintf(out, "verdict:     runs: %s\n", show(rules.Verdict.Reason))
		code = exitOK
	case rules.Decided:
		fmt.Fprintf(out, "verdict:     refused: %s\n", show(rules.Verdict.Reason))
	case rules.Ask != nil:
		fmt.Fprintf(out, "verdict:     the approver is asked, because of: %s\n", show(describeRule(*rules.Ask)))
	default:
		fmt.Fprintln(out, "verdict:     no rule decides, so the approver is asked (--approve on call; without a terminal it denies)")
		if len(rules.Stale) > 0 {
			fmt.Fprintln(out, "             (a rule allowed the tool before it changed: look at what it runs now before you allow it again)")
		}
	}
	if rules.Gap != "" {
		fmt.Fprintf(out, "not covered: %s\n", show(rules.Gap))
	}
	if len(rules.Allow) > 0 {
		fmt.Fprintln(out, "to allow it for good:")
		for _, r := range rules.Allow {
			fmt.Fprintf(out, "  %s\n", show(r.AddCommand()))
		}
	}
	return code
}

// sourceText names where a tool comes from, as rules bind it.
func sourceText(source string) string {
	switch source {
	case "":
		return "the host, no source"
	case approver.BuiltinSource:
		return "builtin"
	}
	return strings.TrimSpace(source)
}
