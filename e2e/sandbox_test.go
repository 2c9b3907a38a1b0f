//go:build linux

package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example workspace runs with the sandbox on, as every workspace does
// by default: each tool is listed as workspace-write without network (or
// read-only, as the manifest asks of word_count and json_query), a
// spawn command writes inside the workspace but not outside it, and the
// declared tools still work.
func TestExampleWorkspaceRunsSandboxed(t *testing.T) {
	ws := exampleWorkspace(t)
	cfg := t.TempDir()

	tools := runBasis(t, basisBinary, cfg, "-C", ws, "tools")
	if tools.code != 0 {
		t.Fatalf("basis tools: exit %d\n%s%s", tools.code, tools.stdout, tools.stderr)
	}
	if !strings.Contains(tools.stdout, "SANDBOX") {
		t.Skip("this basis lists no sandbox (the sandbox is not wired into cmd/basis)")
	}
	for _, row := range toolRows(tools.stdout) {
		if !strings.Contains(row, "workspace-write, no network") && !strings.Contains(row, "read-only, no network") {
			t.Errorf("a tool of the example workspace is not sandboxed by default: %s", row)
		}
	}

	outside := filepath.Join(t.TempDir(), "escape")
	tests := []struct {
		name, tool, input string
		code              int
		stdout            string
		created, absent   string
	}{
		{"spawn writes inside the workspace", "spawn", `{"input": "!touch data/written && echo done"}`, 0, "done\n", filepath.Join(ws, "data", "written"), ""},
		{"spawn cannot write outside it", "spawn", `{"input": "!touch ` + outside + `"}`, 1, "Permission denied", "", outside},
		{"declared tool", "word_count", `{"path": "data/notes.txt"}`, 0, "data/notes.txt: 2 lines, 14 words, 82 characters\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runBasis(t, basisBinary, cfg, "-C", ws, "call", tt.tool, tt.input, "--approve", "allow")
			if got.code != tt.code || !strings.Contains(got.stdout, tt.stdout) {
				t.Errorf("basis call %s %s: exit %d, stdout %q; want exit %d and %q\nstderr: %s", tt.tool, tt.input, got.code, got.stdout, tt.code, tt.stdout, got.stderr)
			}
			if tt.created != "" {
				if _, err := os.Stat(tt.created); err != nil {
					t.Errorf("the write inside the workspace did not happen: %v", err)
				}
			}
			if tt.absent != "" {
				if _, err := os.Stat(tt.absent); err == nil {
					t.Errorf("%s was written, outside the workspace, through the sandbox", tt.absent)
				}
			}
		})
	}
}
