package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/sandbox"
)

// CheckOptions are what a checker's host built and found before
// [Workspace.Check]: Check lists them among its own findings, in
// basis check's order.
type CheckOptions struct {
	// Runtime is the roster as the host builds it, from Declared (the
	// tools [Workspace.Declared] loaded); nil when BuildProblems kept it
	// from being built.
	Runtime       *runtime.Runtime
	Declared      []*declared.Tool
	BuildProblems []error
	// MCPProblems are the problems of the host's MCP config files, and
	// MCPFiles how many of those it read.
	MCPProblems []error
	MCPFiles    int
	// MCPRule reports whether a rule may be about an MCP server's tool,
	// which Runtime may lack when no server was started: such a rule is
	// not warned about. Nil: none is.
	MCPRule func(approver.Rule) bool
}

// CheckReport is what [Workspace.Check] found.
type CheckReport struct {
	// Problems are the rules files', then BuildProblems, the sandbox's,
	// MCPProblems and the declared tools' that cannot run here.
	Problems []error
	// Warnings are the rules that can never match, the rules for tools
	// the roster lacks, what the repository's git config makes git run,
	// and what the manifests say that is unwise.
	Warnings []string
	// Rules counts every layer's rules; Files the manifests read, the
	// rules and sandbox files present and MCPFiles.
	Rules, Files int
}

// Check is what a checker (basis check) says of the workspace beyond
// each file's syntax: every problem and warning, with the host's own.
func (w *Workspace) Check(ctx context.Context, opts *CheckOptions) *CheckReport {
	if opts == nil {
		opts = &CheckOptions{}
	}
	var r CheckReport
	p, err := w.Policy(ctx)
	r.Problems = append(Problems(err), opts.BuildProblems...)
	rules := p.Rules()
	r.Rules = len(rules)
	var unknown []string
	if opts.Runtime != nil {
		r.Problems = append(r.Problems, Problems(w.SandboxProblems(w.ToolPolicies(opts.Declared)))...)
		unknown = unknownToolRules(opts.Runtime.Tools(), rules, opts.MCPRule)
	}
	r.Problems = append(r.Problems, opts.MCPProblems...)
	declProblems, declWarnings := checkDeclared(opts.Declared)
	r.Problems = append(r.Problems, declProblems...)
	for _, wn := range p.Warnings {
		r.Warnings = append(r.Warnings, wn.String())
	}
	r.Warnings = slices.Concat(r.Warnings, unknown, w.GitFindings(ctx), declWarnings)
	// The manifests are counted as declared found them; the rules and
	// sandbox files when they exist.
	manifests, _ := w.Manifests()
	r.Files = len(manifests) + opts.MCPFiles
	for _, path := range []string{w.OperatorRules().Path, w.WorkspaceRulesPath(),
		filepath.Join(w.configDir, sandbox.ConfigFile), filepath.Join(w.root, workspaceSandboxFile)} {
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			r.Files++
		}
	}
	return &r
}
