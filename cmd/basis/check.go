package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

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
	rt, buildErrs := w.build(ctx, nil)
	mcpErrs, mcpLines, mcpFiles, mcpTools := w.mcpCheck(ctx, *start)
	// check starts no MCP server: their tools are not known.
	r := w.ws.Check(ctx, &basisws.CheckOptions{Runtime: rt, Declared: w.declared, BuildProblems: buildErrs,
		MCPProblems: mcpErrs, MCPFiles: mcpFiles, MCPRule: mcpRule})
	for _, err := range r.Problems {
		fmt.Fprintln(e.stdout, err)
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(e.stdout, "warning: "+w)
	}
	// A helper installed but refused would only cost time, unseen.
	if _, err := sandbox.HelperStatus(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stdout, "warning: the sandbox helper is not used: %v; each sandboxed call starts basis itself instead, which takes longer\n", err)
	}
	for _, l := range mcpLines {
		fmt.Fprintln(e.stdout, l)
	}
	if n := len(r.Problems); n > 0 {
		fmt.Fprintf(e.stderr, "basis: %d problem%s; fix %s and run basis check again\n", n, plural(n), them(n))
		return exitUsage
	}
	tools := len(rt.Tools()) + mcpTools
	fmt.Fprintf(e.stdout, "ok: %d tool%s, %d rule%s, %d configuration file%s read\n",
		tools, plural(tools), r.Rules, plural(r.Rules), r.Files, plural(r.Files))
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
