//go:build unix

package workspace

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

// TestSandboxOf: the operator's config and the workspace's tightening one
// decide what a host lists of each tool's sandbox, in words too.
func TestSandboxOf(t *testing.T) {
	tests := []struct {
		name                string
		operator, workspace string // "" for no file
		want                map[string]string
	}{
		{
			name: "the default: workspace-write, the network only for a tool that declares it",
			want: map[string]string{"mark": "workspace-write, no network", "mark_net": "workspace-write, network"},
		},
		{
			name:     "the operator makes mark read-only",
			operator: `{"schema": 1, "tools": {"mark": {"mode": "read-only"}}}`,
			want:     map[string]string{"mark": "read-only, no network", "mark_net": "workspace-write, network"},
		},
		{
			name:      "a workspace takes mark_net's network away",
			workspace: `{"schema": 1, "tools": {"mark_net": {"network": false}}}`,
			want:      map[string]string{"mark": "workspace-write, no network", "mark_net": "workspace-write, no network"},
		},
		{
			name:     "off has the network",
			operator: `{"schema": 1, "mode": "off"}`,
			want:     map[string]string{"mark": "off", "mark_net": "off"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home := markWorkspace(t), t.TempDir()
			if tt.operator != "" {
				write(t, filepath.Join(home, ".config", "basis", sandbox.ConfigFile), tt.operator)
			}
			if tt.workspace != "" {
				write(t, filepath.Join(ws, ".basis", sandbox.ConfigFile), tt.workspace)
			}
			w := openIn(t, ws, home)
			got := map[string]string{"mark": w.SandboxOf("mark", false).String(), "mark_net": w.SandboxOf("mark_net", true).String()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sandboxes (-want +got):\n%s", diff)
			}
			if off := w.SandboxOf("mark", false); off.Mode == sandbox.Off && off.Network != "allowed" {
				t.Errorf("an unsandboxed tool shows network %q, want allowed", off.Network)
			}
		})
	}
}

// TestDeclaredStatus: a declared tool that cannot run here says why, by
// variable and field, never by value.
func TestDeclaredStatus(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"fine": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"]},
		"token": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "env": {"T": "${WS_TEST_UNSET_A}", "U": "${WS_TEST_UNSET_B}"}},
		"away": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "cwd": ".."},
		"nope": {"description": "d", "input_schema": {"type": "object"}, "command": ["./.basis/bin/nope"]},
		"plain": {"description": "d", "input_schema": {"type": "object"}, "command": ["./data.txt"]}}}`)
	write(t, filepath.Join(ws, "data.txt"), "not a program")
	tools, err := openIn(t, ws, home).Declared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range tools {
		got[tool.Descriptor().Name] = DeclaredStatus(tool)
	}
	want := map[string]string{
		"fine":  "ok",
		"token": "unavailable: WS_TEST_UNSET_A, WS_TEST_UNSET_B not set",
		"away":  "unavailable: cwd outside the workspace",
		"nope":  "cannot start: the program ./.basis/bin/nope does not exist",
		"plain": "cannot start: the program ./data.txt is not executable: permission denied; chmod +x it",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestToolInfos: a host lists spawn's and each declared tool's sandbox
// and status, and no sandbox for a tool the workspace does not confine.
func TestToolInfos(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"mark": {"description": "Leaves a mark.", "input_schema": {"type": "object"}, "command": ["true"]},
		"mark_net": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "network": true, "side_effect": "external", "env": {"T": "${WS_TEST_UNSET_A}"}}}}`)
	w := openIn(t, ws, home)
	tools, err := w.Declared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	roster := []contract.Descriptor{{Name: contract.SpawnName}, {Name: "mcp__srv__x", Binding: contract.BindingMCP}}
	for _, tool := range tools {
		roster = append(roster, tool.Descriptor())
	}
	got := map[string]string{}
	for _, info := range w.ToolInfos(roster, tools) {
		sb := "none"
		if info.Sandbox != nil {
			sb = info.Sandbox.String()
		}
		got[info.Name] = info.Status + " | " + sb
	}
	want := map[string]string{
		contract.SpawnName: "ok | workspace-write, no network",
		"mcp__srv__x":      "ok | none",
		"mark":             "ok | workspace-write, no network",
		"mark_net":         "unavailable: WS_TEST_UNSET_A not set | workspace-write, network",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool infos (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mark", "mark_net", contract.SpawnName}, slices.Sorted(maps.Keys(w.ToolPolicies(tools)))); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
}

// TestCheckDeclared: a tool that cannot run here is a problem, named by
// its variable, never by a value.
func TestCheckDeclared(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"fine": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"]},
		"token": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "env": {"T": "${WS_TEST_UNSET_A}"}},
		"gone": {"description": "d", "input_schema": {"type": "object"}, "command": ["./no/such/program"]}}}`)
	tools, err := openIn(t, ws, home).Declared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	problems, _ := checkDeclared(tools)
	var got []string
	for _, p := range problems {
		switch {
		case strings.Contains(p.Error(), "WS_TEST_UNSET_A"):
			got = append(got, "token")
		case strings.Contains(p.Error(), "no/such/program"):
			got = append(got, "gone")
		default:
			got = append(got, p.Error())
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"gone", "token"}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
