//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Through the CLI: a link planted at the audit path in the workspace
// refuses the run, and the denied call's subject reaches nothing.
func TestCallRefusesAPlantedAuditLink(t *testing.T) {
	ws := copyWorkspace(t)
	victim := filepath.Join(t.TempDir(), "bashrc")
	write(t, victim, "# mine\n")
	symlink(t, victim, filepath.Join(ws, "audit.jsonl"))
	stdout, stderr, code := basisIn(t, ws, t.TempDir(), "call", "deploy", `{"service": "api"}`, "--approve", "deny", "--audit", "audit.jsonl")
	if code != exitUsage {
		t.Errorf("exit %d, want %d; stdout %q", code, exitUsage, stdout)
	}
	if want := "basis: call: cannot open the audit file audit.jsonl: " + filepath.Join(resolvePath(ws), "audit.jsonl") + " is a symbolic link inside " + resolvePath(ws); !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q does not start %q", stderr, want)
	}
	if data, _ := os.ReadFile(victim); string(data) != "# mine\n" {
		t.Errorf("the link's target holds %q", data)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// resolvePath is p with its symlinks resolved, as basis reports it.
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
