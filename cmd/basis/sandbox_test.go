//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
	basisws "github.com/basis-go/basis/workspace"
	"github.com/google/go-cmp/cmp"
)

// basisIn runs basis in this process on the workspace ws, with HOME home
// and the config directory beneath it.
func basisIn(t *testing.T, ws, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errs bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errs,
		environ:       []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home},
		getwd:         func() (string, error) { return ws, nil },
		interactive:   func() bool { return false },
		progressWidth: func() int { return 0 },
		tty:           filepath.Join(t.TempDir(), "no-tty"),
	}
	code = run(context.Background(), append([]string{"-C", ws}, args...), e)
	return out.String(), errs.String(), code
}

// markWorkspace is a workspace whose tool "mark" creates the file "ran" in
// it, and "mark_net" the same with the network.
func markWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"mark": {"description": "Leaves a mark.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/mark.sh"]},
		"mark_net": {"description": "Leaves a mark, with the network.", "input_schema": {"type": "object"},
			"command": ["./.basis/tools/mark.sh"], "network": true, "side_effect": "external"}}}`)
	write(t, filepath.Join(ws, ".basis", "tools", "mark.sh"), "#!/bin/sh\ntouch ran\necho marked\n")
	if err := os.Chmod(filepath.Join(ws, ".basis", "tools", "mark.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestToolsShowEachToolsSandbox: the operator's config and the
// workspace's tightening one decide what `basis tools` shows.
func TestToolsShowEachToolsSandbox(t *testing.T) {
	tests := []struct {
		name      string
		operator  string // "" for no file
		workspace string
		want      map[string]basisws.ToolSandbox
	}{
		{
			name: "the default: workspace-write, the network only for a tool that declares it",
			want: map[string]basisws.ToolSandbox{
				"spawn":    {Mode: sandbox.WorkspaceWrite, Network: "none"},
				"mark":     {Mode: sandbox.WorkspaceWrite, Network: "none"},
				"mark_net": {Mode: sandbox.WorkspaceWrite, Network: "allowed"},
			},
		},
		{
			name:     "the operator gives spawn the network and makes mark read-only",
			operator: `{"schema": 1, "spawn": {"network": true}, "tools": {"mark": {"mode": "read-only"}}}`,
			want: map[string]basisws.ToolSandbox{
				"spawn":    {Mode: sandbox.WorkspaceWrite, Network: "allowed"},
				"mark":     {Mode: sandbox.ReadOnly, Network: "none"},
				"mark_net": {Mode: sandbox.WorkspaceWrite, Network: "allowed"},
			},
		},
		{
			name:      "a workspace tightens: read-only everywhere, no network for mark_net",
			operator:  `{"schema": 1, "spawn": {"network": true}}`,
			workspace: `{"schema": 1, "mode": "read-only", "tools": {"mark_net": {"network": false}}}`,
			want: map[string]basisws.ToolSandbox{
				"spawn":    {Mode: sandbox.ReadOnly, Network: "allowed"},
				"mark":     {Mode: sandbox.ReadOnly, Network: "none"},
				"mark_net": {Mode: sandbox.ReadOnly, Network: "none"},
			},
		},
		{
			name:     "off",
			operator: `{"schema": 1, "mode": "off"}`,
			want: map[string]basisws.ToolSandbox{
				"spawn":    {Mode: sandbox.Off, Network: "allowed"},
				"mark":     {Mode: sandbox.Off, Network: "allowed"},
				"mark_net": {Mode: sandbox.Off, Network: "allowed"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home := markWorkspace(t), t.TempDir()
			if tt.operator != "" {
				write(t, filepath.Join(home, ".config", "basis", "sandbox.json"), tt.operator)
			}
			if tt.workspace != "" {
				write(t, filepath.Join(ws, ".basis", "sandbox.json"), tt.workspace)
			}
			stdout, stderr, code := basisIn(t, ws, home, "tools", "--json")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var tools []basisws.ToolInfo
			if err := json.Unmarshal([]byte(stdout), &tools); err != nil {
				t.Fatal(err)
			}
			got := map[string]basisws.ToolSandbox{}
			for _, tool := range tools {
				if tool.Sandbox == nil {
					t.Errorf("tool %s shows no sandbox", tool.Name)
					continue
				}
				got[tool.Name] = *tool.Sandbox
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sandboxes (-want +got):\n%s", diff)
			}
			// The table says the same in words.
			table, _, _ := basisIn(t, ws, home, "tools")
			for name, sb := range tt.want {
				if !strings.Contains(table, "\n"+name+" ") || !strings.Contains(table, sb.String()) {
					t.Errorf("the table does not show %s as %q:\n%s", name, sb.String(), table)
				}
			}
		})
	}
}

// TestSandboxConfigProblemsStopEverything: a sandbox.json that cannot be
// used is a configuration problem, never a silently wider sandbox.
func TestSandboxConfigProblemsStopEverything(t *testing.T) {
	tests := []struct {
		name      string
		operator  string
		workspace string
		says      string
	}{
		{name: "operator file not JSON", operator: `{"schema": 1,`, says: "~/.config/basis/sandbox.json:1:14: the file ends before"},
		{name: "operator misspells a key", operator: `{"schema": 1, "netwrok": true}`, says: "~/.config/basis/sandbox.json:1:15: netwrok: unknown key"},
		{name: "workspace turns the sandbox off", workspace: `{"schema": 1, "mode": "off"}`, says: ".basis/sandbox.json:1:23: mode: a workspace sandbox.json may only tighten"},
		{name: "workspace grants the network", workspace: `{"schema": 1, "tools": {"mark": {"network": true}}}`, says: ".basis/sandbox.json:1:45: tool mark: network: a workspace sandbox.json may only tighten"},
		{name: "workspace adds a write path", workspace: `{"schema": 1, "write": ["/etc"]}`, says: ".basis/sandbox.json:1:24: write: a workspace sandbox.json may only tighten"},
		{name: "a directory where the file would be", workspace: "DIR", says: "sandbox.json: not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home := markWorkspace(t), t.TempDir()
			if tt.operator != "" {
				write(t, filepath.Join(home, ".config", "basis", "sandbox.json"), tt.operator)
			}
			switch tt.workspace {
			case "":
			case "DIR":
				if err := os.Mkdir(filepath.Join(ws, ".basis", "sandbox.json"), 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				write(t, filepath.Join(ws, ".basis", "sandbox.json"), tt.workspace)
			}
			stdout, _, code := basisIn(t, ws, home, "check")
			if code != exitUsage || !strings.Contains(stdout, tt.says) {
				t.Errorf("check: exit %d, want %d, and a problem with %q:\n%s", code, exitUsage, tt.says, stdout)
			}
			_, _, code = basisIn(t, ws, home, "call", "mark", "--approve", "allow")
			if code != exitUsage {
				t.Errorf("call: exit %d, want %d", code, exitUsage)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Error("a call ran despite the sandbox config problem")
			}
		})
	}
}
