//go:build unix

package workspace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

// TestCheck: every problem is listed, in basis check's order — the rules
// files', the host's build, the sandbox's, the host's MCP files', the
// declared tools' — and every warning; a rule the host says may name an
// MCP tool is not warned about; the files present are counted.
func TestCheck(t *testing.T) {
	withoutLandlock(t)
	ws, home := markWorkspace(t), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"mark": {"description": "Leaves a mark.", "input_schema": {"type": "object"}, "command": ["true"]},
		"token": {"description": "d", "input_schema": {"type": "object"}, "command": ["true"], "env": {"T": "${WS_TEST_UNSET_A}"}}}}`)
	write(t, filepath.Join(ws, ".basis", "rules.json"), `{not json`)
	w := openIn(t, ws, home)
	write(t, w.OperatorRules().Path, `{"schema": 2, "rules": [
		{"tool": "makr", "source": "*", "decision": "deny"},
		{"tool": "mcp__srv__x", "source": "*", "decision": "deny"}]}`)
	tools, err := w.Declared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gate, err := approver.NewGate(approver.DenyAll(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := w.Runtime(t.Context(), &RuntimeOptions{Gate: gate, Declared: tools})
	if err != nil {
		t.Fatal(err)
	}
	mcpRule := func(r approver.Rule) bool { return strings.HasPrefix(r.Tool, "mcp__") }
	opts := &CheckOptions{Runtime: rt, Declared: tools, BuildProblems: []error{errors.New("BUILD")},
		MCPProblems: []error{errors.New("MCP")}, MCPFiles: 2, MCPRule: mcpRule}

	// Each problem by where it comes from.
	kind := func(err error) string {
		for _, k := range []string{"BUILD", "MCP", "WS_TEST_UNSET_A", noLandlock, "rules.json"} {
			if strings.Contains(err.Error(), k) {
				return k
			}
		}
		return err.Error()
	}
	r := w.Check(t.Context(), opts)
	var got []string
	for _, p := range r.Problems {
		if k := kind(p); len(got) == 0 || got[len(got)-1] != k {
			got = append(got, k)
		}
	}
	if diff := cmp.Diff([]string{"rules.json", "BUILD", noLandlock, "MCP", "WS_TEST_UNSET_A"}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no tool named makr here (did you mean mark?)") {
		t.Errorf("warnings: %q, want one for makr alone", r.Warnings)
	}
	// A manifest, two rules files, two MCP files.
	if r.Rules != 2 || r.Files != 5 {
		t.Errorf("rules %d, files %d; want 2 and 5", r.Rules, r.Files)
	}

	// A roster that could not be built: its problems only, nothing of
	// the sandbox or of unknown rules.
	r = w.Check(t.Context(), &CheckOptions{BuildProblems: []error{errors.New("BUILD")}, MCPRule: mcpRule})
	got = nil
	for _, p := range r.Problems {
		got = append(got, kind(p))
	}
	if diff := cmp.Diff([]string{"rules.json", "BUILD"}, got); diff != "" {
		t.Errorf("unbuilt: problems (-want +got):\n%s", diff)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("unbuilt: warnings %q, want none", r.Warnings)
	}
}
