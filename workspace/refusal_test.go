//go:build unix

package workspace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
)

// TestSandboxRefusal: a failed program's last line names the sandbox it
// ran in and the setting that allows more, as the tool's manifest entry
// asks (read-only, network); a tool the workspace does not confine has
// none.
func TestSandboxRefusal(t *testing.T) {
	if err := sandbox.Check(sandbox.Policy{Mode: sandbox.ReadOnly, LimitReads: true}); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	ws, home := markWorkspace(t), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"mark": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"]},
		"look": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "sandbox": "read-only"},
		"net": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "network": true, "side_effect": "external"}}}`)
	w := openIn(t, ws, home)
	tools, err := w.Declared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool      string
		want, not string
	}{
		{tool: contract.SpawnName, want: `the sandbox (workspace-write, no network) may have refused this`, not: "manifest entry"},
		{tool: "mark", want: `the sandbox (workspace-write, no network) may have refused this`},
		{tool: "look", want: `the sandbox (read-only, no network)`, not: "workspace-write"},
		{tool: "net", want: `the sandbox (workspace-write, network)`, not: "for the network"},
		{tool: "mcp__srv__x"},
		{tool: "elsewhere"},
	} {
		got := w.SandboxRefusal(tc.tool, ws, tools)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("SandboxRefusal(%s) = %q; want it to say %q and not %q", tc.tool, got, tc.want, tc.not)
		}
	}
}
