//go:build nomcp

package main

import (
	"strings"

	"context"
	"fmt"
	"github.com/basis-go/basis/approver"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/contract"
)

// mcpInBuild reports whether this binary can load MCP servers: built with
// -tags nomcp, it holds no MCP code at all.
const mcpInBuild = false

// mcpState is empty in a build without MCP: a workspace has no client.
//
//lint:ignore U1000 the workspace embeds it in every build; only the MCP build has fields to use.
type mcpState struct{}

// mcpConfigFiles are the MCP config files present here, which this build
// cannot load.
func (w *workspace) mcpConfigFiles() []string {
	var found []string
	for _, p := range []string{filepath.Join(w.root, ".mcp.json"), filepath.Join(w.configDir, "mcp.json")} {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			found = append(found, p)
		}
	}
	return found
}

func (w *workspace) mcpTools(context.Context) ([]contract.ExecutableTool, error) { return nil, nil }

func (w *workspace) closeMCP() {}

func (w *workspace) mcpStartError() (error, bool) { return nil, false }

func signInLine(error) (string, bool) { return "", false }

func (w *workspace) mcpServerRows() []mcpServerRow { return nil }

func (w *workspace) mcpSandbox(string) string { return "-" }

// mcpNotes says, for each MCP config file present, that this build does
// not load it: its servers are not missing by mistake.
func (w *workspace) mcpNotes() []string {
	if w.g.noMCP {
		return nil
	}
	var notes []string
	for _, p := range w.mcpConfigFiles() {
		notes = append(notes, fmt.Sprintf("%s: MCP servers are not in this build (built with -tags nomcp); its servers are not loaded", w.displayPath(p)))
	}
	return notes
}

// mcpCheck reports the MCP config files present as warnings.
func (w *workspace) mcpCheck(context.Context, bool) (errs []error, lines []string, files, tools int) {
	for _, n := range w.mcpNotes() {
		lines = append(lines, "warning: "+n)
	}
	return nil, lines, 0, 0
}

func notInBuild(command string, e *env) int {
	return usageErr(e, "%s: MCP is not in this build (built with -tags nomcp); use a basis built without that tag", command)
}

func cmdMCP(_ context.Context, _ *globals, _ []string, e *env) int { return notInBuild("mcp", e) }

func cmdServe(_ context.Context, _ *globals, _ []string, e *env) int { return notInBuild("serve", e) }

// mcpRule reports whether a rule names an MCP tool: one named mcp__….
func mcpRule(r approver.Rule) bool { return strings.HasPrefix(r.Tool, contract.MCPPrefix) }
