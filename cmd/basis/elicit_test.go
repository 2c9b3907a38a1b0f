//go:build !nomcp

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// elicitWorkspace is a workspace whose operator mcp.json names mcpbind's
// test server, with its tools that ask (ask, askdirect, askenums, sample),
// as the server "t".
func elicitWorkspace(t *testing.T) (ws, config string) {
	t.Helper()
	dir := t.TempDir()
	ws, config = filepath.Join(dir, "ws"), filepath.Join(dir, "config")
	write(t, filepath.Join(config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"t": {"command": %q, "args": ["-surfaces", "L"]}}}`, mcpTestServerBinary))
	write(t, filepath.Join(ws, "README"), "a workspace\n")
	return ws, config
}

// --elicit answers a server's questions during basis call: with the
// form's defaults, or not at all; sampling is always declined.
func TestCallAnswersAServersQuestions(t *testing.T) {
	ws, config := elicitWorkspace(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string // in stdout
		notWant  []string
	}{{
		name:     "defaults accepts the form with its defaults (an input request, protocol 2026-07-28 style)",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__ask", `{"message": "who?"}`},
		wantCode: exitOK,
		want:     []string{`"action":"accept"`, `"name":"x"`},
	}, {
		name:     "defaults accepts a form without defaults or required fields empty (elicitation/create)",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__askdirect", `{"message": "who?"}`},
		wantCode: exitOK,
		want:     []string{`"action":"accept"`},
		notWant:  []string{`"name"`},
	}, {
		name:    "decline offers no elicitation: the server cannot ask",
		args:    []string{"call", "--approve", "allow", "--elicit", "decline", "mcp__t__askdirect", `{"message": "who?"}`},
		notWant: []string{`"action":"accept"`},
		// The server says how its question failed; the call fails.
		wantCode: exitFailed,
	}, {
		name:     "without a terminal the default is decline",
		args:     []string{"call", "--approve", "allow", "mcp__t__askdirect", `{"message": "who?"}`},
		notWant:  []string{`"action":"accept"`},
		wantCode: exitFailed,
	}, {
		name:     "a sampling request is declined: basis has no model",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__sample", `{}`},
		wantCode: exitFailed,
		want:     []string{"declined"},
	}, {
		name:     "an unknown mode is a usage error",
		args:     []string{"call", "--approve", "allow", "--elicit", "always", "mcp__t__ask", `{}`},
		wantCode: exitUsage,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runBasis(t, ws, config, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %s:\n%s\nstderr:\n%s", w, out, errOut)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("stdout holds %s:\n%s", w, out)
				}
			}
		})
	}
}
