//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

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

// openIn opens ws with HOME home, the config directory beneath it.
func openIn(t *testing.T, ws, home string) *Workspace {
	t.Helper()
	w, err := Open(t.Context(), &Options{Root: ws, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// noLandlock is the reason a kernel without Landlock gives.
const noLandlock = "this kernel has no Landlock (it is not built in, or not enabled with the lsm= boot parameter)"

// withoutLandlock plays, until the test ends, a kernel without Landlock:
// every sandbox but one whose mode is off is unavailable.
func withoutLandlock(t *testing.T) {
	real := checkSandbox
	checkSandbox = func(p sandbox.Policy) error {
		if p.Mode == sandbox.Off {
			return nil
		}
		return &sandbox.UnavailableError{Reason: noLandlock}
	}
	t.Cleanup(func() { checkSandbox = real })
}

// TestSandboxUnavailableFailsClosed plays a kernel without Landlock: every
// sandboxed call is refused at its preview with the sandbox's message,
// which names the opt-out; nothing runs; SandboxProblems reports it; and
// the operator's "mode": "off" is the way out.
func TestSandboxUnavailableFailsClosed(t *testing.T) {
	withoutLandlock(t)
	documented := (&sandbox.UnavailableError{Reason: noLandlock}).Error()
	if !strings.Contains(documented, `"mode": "off" in sandbox.json in basis's config directory`) {
		t.Fatalf("the sandbox's message does not name the opt-out: %s", documented)
	}
	call := func(t *testing.T, w *Workspace, tool string) runtime.Outcome {
		rt, err := w.Runtime(t.Context(), &RuntimeOptions{Approver: approver.AllowAll()})
		if err != nil {
			t.Fatal(err)
		}
		return rt.Call(t.Context(), tool, contract.Call{ID: "1", Input: []byte(`{}`)})
	}
	for _, tool := range []string{"mark", "mark_net"} {
		t.Run(tool, func(t *testing.T) {
			ws, home := markWorkspace(t), t.TempDir()
			out := call(t, openIn(t, ws, home), tool)
			if out.Status != runtime.StatusRefused || !strings.Contains(out.Text, "cannot run here: "+documented) {
				t.Errorf("outcome %v %q; want a refusal carrying the sandbox's message", out.Status, out.Text)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Fatal("the program ran unconfined")
			}

			// The operator opts out; then it runs.
			write(t, filepath.Join(home, ".config", "basis", "sandbox.json"), `{"schema": 1, "mode": "off"}`)
			if out := call(t, openIn(t, ws, home), tool); out.Status != runtime.StatusOK {
				t.Fatalf("with the sandbox off: %v %q", out.Status, out.Text)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
				t.Errorf("with the sandbox off the program did not run: %v", err)
			}
		})
	}

	t.Run("problems", func(t *testing.T) {
		ws, home := markWorkspace(t), t.TempDir()
		w := openIn(t, ws, home)
		policies := map[string]sandbox.Policy{
			"spawn": w.SandboxPolicy(sandbox.SpawnTool, false), "mark": w.SandboxPolicy("mark", false), "mark_net": w.SandboxPolicy("mark_net", true)}
		err := w.SandboxProblems(policies)
		if err == nil {
			t.Fatal("no problem reported")
		}
		if diff := cmp.Diff("mark, mark_net, spawn cannot run here: "+documented, err.Error()); diff != "" {
			t.Errorf("problems (-want +got):\n%s", diff)
		}
		write(t, filepath.Join(home, ".config", "basis", "sandbox.json"), `{"schema": 1, "mode": "off"}`)
		w = openIn(t, ws, home)
		policies = map[string]sandbox.Policy{"mark": w.SandboxPolicy("mark", false)}
		if err := w.SandboxProblems(policies); err != nil {
			t.Errorf("with the sandbox off: %v", err)
		}
	})
}

// A sandbox config with a problem stops every program: Open says so,
// Runtime refuses to build, and a program started through the hook
// anyway is refused, never run unconfined.
func TestABrokenSandboxConfigConfinesNothing(t *testing.T) {
	ws, home := markWorkspace(t), t.TempDir()
	write(t, filepath.Join(ws, ".basis", "sandbox.json"), `{"schema": 1, "mode": "loose"}`)
	w, err := Open(t.Context(), &Options{Root: ws, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}})
	if err == nil || w == nil {
		t.Fatalf("Open = %v, %v; want the workspace and the sandbox config's problem", w, err)
	}
	if !strings.Contains(err.Error(), filepath.Join(".basis", "sandbox.json")) {
		t.Errorf("the problem does not name the file: %v", err)
	}
	if _, err := w.Runtime(t.Context(), &RuntimeOptions{Approver: approver.AllowAll()}); err == nil {
		t.Error("Runtime built a roster with a broken sandbox config")
	}
	if _, err := w.Sandbox()("mark", false, ws); err == nil {
		t.Error("the hook confined a program with a broken sandbox config")
	}
	if _, err := w.OpenAudit(filepath.Join(ws, "audit.jsonl")); err == nil {
		t.Error("the audit file was opened with a broken sandbox config")
	}
}
