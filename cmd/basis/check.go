package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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
	g.allSchemas = true // every bad schema is a problem to report
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
		if err := w.ws.SandboxProblems(w.ws.ToolPolicies(w.declared)); err != nil {
			errs = append(errs, basisws.Problems(err)...)
		}
	}
	var warnings []string
	for _, wn := range p.Warnings {
		warnings = append(warnings, "warning: "+wn.String())
	}
	var unknown []string
	if rt != nil {
		// check starts no MCP server: their tools are not known.
		unknown = basisws.UnknownToolRules(rt.Tools(), rules, mcpRule)
	}
	mcpErrs, mcpLines, mcpFiles, mcpTools := w.mcpCheck(ctx, *start)
	errs = append(errs, mcpErrs...)
	declErrs, declWarnings := basisws.CheckDeclared(w.declared)
	errs = append(errs, declErrs...)
	for _, wn := range slices.Concat(unknown, w.ws.GitFindings(ctx), declWarnings) {
		warnings = append(warnings, "warning: "+wn)
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
