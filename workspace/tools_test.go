//go:build unix

package workspace

import (
	"path/filepath"
	"testing"

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
		"away": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "cwd": ".."}}}`)
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
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
