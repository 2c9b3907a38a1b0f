package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/sandbox"
	basisws "github.com/basis-go/basis/workspace"
)

func cmdCheck(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("check", "check [--start]", `Validates every configuration file basis would read — the workspace's and the
global tools.json, the operator's rules.json and the workspace's
.basis/rules.json, the operator's sandbox.json and the workspace's
.basis/sandbox.json, the workspace's .mcp.json and the operator's mcp.json
(syntax, fields, ${VAR}s set) — and the roster they make together, and
whether this machine can sandbox the tools' programs as those files ask.
Every problem in every file is printed, one per line. Warnings — such as a
repository git config that names programs git runs (core.fsmonitor, a !
alias, a diff driver), by file, line and key — are printed too and do not
fail the check. No MCP server is started. Exit status 0 when there is no
problem, 2 otherwise.

  --start   also start every trusted MCP server and list its tools; a
            server that fails to start is a problem
`)
	start := c.fs.Bool("start", false, "")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	p, err := w.ws.Policy(ctx)
	var errs []error
	if err != nil {
		errs = basisws.Problems(err)
	}
	rules := p.Rules()
	rt, buildErrs := w.build(ctx, nil)
	errs = append(errs, buildErrs...)
	if rt != nil {
		if err := w.ws.SandboxProblems(w.toolPolicies()); err != nil {
			errs = append(errs, basisws.Problems(err)...)
		}
	}
	var warnings []string
	for _, wn := range p.Warnings {
		warnings = append(warnings, "warning: "+wn.String())
	}
	warnings = append(warnings, w.rulesForMissingTools(rt, rules)...)
	for _, f := range w.ws.GitFindings(ctx) {
		warnings = append(warnings, "warning: "+f)
	}
	mcpErrs, mcpLines, mcpFiles, mcpTools := w.mcpCheck(ctx, *start)
	errs = append(errs, mcpErrs...)
	for _, t := range w.declared {
		if err := t.Unavailable(); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := t.CheckStart(); err != nil {
			errs = append(errs, err)
		}
		for _, w := range t.Warnings() {
			warnings = append(warnings, "warning: "+w.String())
		}
	}
	for _, err := range errs {
		fmt.Fprintln(e.stdout, err)
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stdout, w)
	}
	for _, l := range mcpLines {
		fmt.Fprintln(e.stdout, l)
	}
	if len(errs) > 0 {
		fmt.Fprintf(e.stderr, "basis: %d problem%s; fix %s and run basis check again\n", len(errs), plural(len(errs)), them(len(errs)))
		return exitUsage
	}
	// The manifests were read and are counted as declared found them; the
	// rules files are counted when they exist.
	manifests, _ := w.ws.Manifests()
	files := len(manifests) + mcpFiles
	for _, p := range []string{w.ws.OperatorRules().Path, w.ws.WorkspaceRulesPath(),
		filepath.Join(w.configDir, sandbox.ConfigFile), filepath.Join(w.root, ".basis", sandbox.ConfigFile)} {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			files++
		}
	}
	tools := len(rt.Tools()) + mcpTools
	fmt.Fprintf(e.stdout, "ok: %d tool%s, %d rule%s, %d configuration file%s read\n",
		tools, plural(tools), len(rules), plural(len(rules)), files, plural(files))
	return exitOK
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// rulesForMissingTools warns about operator and workspace rules that name
// a tool this workspace does not have: a typo, or a rule for another
// repository, which is harmless but worth knowing about. A rule for an MCP
// tool is not judged: check starts no server, so their tools are not
// known.
func (w *workspace) rulesForMissingTools(rt *runtime.Runtime, rules []approver.Rule) []string {
	if rt == nil {
		return nil
	}
	var names []string
	have := map[string]bool{}
	for _, d := range rt.Tools() {
		have[d.Name] = true
		names = append(names, d.Name)
	}
	var out []string
	for _, r := range rules {
		if have[r.Tool] || r.Scope == approver.ScopeSystem || mcpRule(r) {
			continue
		}
		where := r.File
		if r.Number > 0 {
			where += " rule " + strconv.Itoa(r.Number)
		}
		out = append(out, "warning: "+where+": "+r.String()+": no tool named "+r.Tool+" here"+didYouMean(r.Tool, names))
	}
	return out
}
