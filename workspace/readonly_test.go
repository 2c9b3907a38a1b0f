//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
)

// readOnlyWorkspace has "look", a read-only tool that prints a workspace
// file, and "mark", an ordinary tool.
func readOnlyWorkspace(t *testing.T) string {
	t.Helper()
	ws := markWorkspace(t)
	write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
		"look": {"description": "Reads.", "input_schema": {"type": "object"}, "command": ["/bin/cat", "src.txt"], "sandbox": "read-only"},
		"mark": {"description": "Leaves a mark.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/mark.sh"]}}}`)
	write(t, filepath.Join(ws, "src.txt"), "hello\n")
	return ws
}

// asked records whether the approver was asked, and denies.
type asked struct{ n int }

func (a *asked) Approve(context.Context, approver.Request) (approver.Answer, error) {
	a.n++
	return approver.Answer{Decision: approver.Deny, Reason: "no"}, nil
}

// A read-only tool passes unasked where the sandbox holds it; the
// operator's sandbox "off", ask_read_only in the system's or operator's
// rules (whatever the workspace's says) make it asked. A workspace cannot
// make another tool read-only through its sandbox.json.
func TestReadOnlyToolPassesUnasked(t *testing.T) {
	if err := sandbox.Check(sandbox.Policy{Mode: sandbox.ReadOnly, LimitReads: true}); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	tests := []struct {
		name      string
		tool      string
		files     map[string]string // relative to the config dir ("op/"), the system dir ("sys/") or the workspace ("ws/")
		wantAsked bool
	}{
		{"read-only", "look", nil, false},
		{"an ordinary tool", "mark", nil, true},
		{"the operator's sandbox is off", "look", map[string]string{"op/sandbox.json": `{"schema": 1, "mode": "off"}`}, true},
		{"the operator asks about reads", "look", map[string]string{"op/rules.json": `{"schema": 2, "ask_read_only": true, "rules": []}`}, true},
		{"the system asks about reads", "look", map[string]string{"sys/rules.json": `{"schema": 2, "ask_read_only": true, "rules": []}`}, true},
		{"the workspace cannot undo the operator's ask_read_only", "look", map[string]string{
			"op/rules.json":        `{"schema": 2, "ask_read_only": true, "rules": []}`,
			"ws/.basis/rules.json": `{"schema": 2, "ask_read_only": false, "rules": []}`}, true},
		{"a workspace's read-only mode does not make a tool read-only", "mark", map[string]string{
			"ws/.basis/sandbox.json": `{"schema": 1, "tools": {"mark": {"mode": "read-only"}}}`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home, sys := readOnlyWorkspace(t), t.TempDir(), t.TempDir()
			for rel, content := range tt.files {
				where, rest, _ := strings.Cut(rel, "/")
				base := map[string]string{"op": filepath.Join(home, ".config", "basis"), "sys": sys, "ws": ws}[where]
				write(t, filepath.Join(base, rest), content)
				if where == "sys" {
					os.Chmod(filepath.Join(base, rest), 0o644)
				}
			}
			w, err := Open(t.Context(), &Options{Root: ws, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, approver.SystemConfigDirEnv + "=" + sys}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			a := &asked{}
			rt, err := w.Runtime(t.Context(), &RuntimeOptions{Approver: a})
			if err != nil {
				t.Fatal(err)
			}
			out := rt.Call(t.Context(), tt.tool, contract.Call{ID: "1", Input: []byte(`{}`)})
			if (a.n > 0) != tt.wantAsked {
				t.Fatalf("asked = %v, want %v (outcome %v %q)", a.n > 0, tt.wantAsked, out.Status, out.Text)
			}
			if !tt.wantAsked && (out.Status != runtime.StatusOK || out.Text != "hello") {
				t.Errorf("outcome %v %q, want the file read", out.Status, out.Text)
			}
		})
	}
}

// The refusal line names the sandbox and the settings that allow more.
func TestRefusalLine(t *testing.T) {
	ws, home := readOnlyWorkspace(t), t.TempDir()
	w := openIn(t, ws, home)
	tests := []struct {
		name     string
		confiner func() (string, error)
		want     string
	}{
		{"workspace-write", func() (string, error) {
			c, err := w.Sandbox()("mark", false, ws)
			if err != nil {
				return "", err
			}
			return c.Refusal, nil
		}, `basis: the sandbox (workspace-write, no network) may have refused this: to let it write outside the workspace, add the directory to "write" in ~/.config/basis/sandbox.json (.git, .basis and .mcp.json stay read-only); for the network, "network": true (with "side_effect": "external") in its manifest entry`},
		{"spawn", func() (string, error) {
			c, err := w.Sandbox()("spawn", false, ws)
			if err != nil {
				return "", err
			}
			return c.Refusal, nil
		}, `basis: the sandbox (workspace-write, no network) may have refused this: to let it write outside the workspace, add the directory to "write" in ~/.config/basis/sandbox.json (.git, .basis and .mcp.json stay read-only); for the network, "spawn": {"network": true} in ~/.config/basis/sandbox.json`},
		{"read-only tool", func() (string, error) {
			c, err := w.ReadOnlySandbox()("look", false, ws)
			if err != nil {
				return "", err
			}
			return c.Refusal, nil
		}, `basis: the sandbox (read-only, no network) may have refused this: a read-only tool writes only its TMPDIR and reads only the workspace, system directories and its program; to let it do more, take "sandbox": "read-only" out of its manifest entry`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.confiner()
			if err != nil {
				t.Skipf("no sandbox here: %v", err)
			}
			if got != tt.want {
				t.Errorf("refusal\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
