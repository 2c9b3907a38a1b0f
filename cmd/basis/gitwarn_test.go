package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

// gitWorkspace is a workspace that is a git repository whose .git/config
// is config.
func gitWorkspace(t *testing.T, config string) (ws, configDir string) {
	t.Helper()
	ws = t.TempDir()
	for _, sub := range []string{".git/objects", ".git/refs", ".basis"} {
		if err := os.MkdirAll(filepath.Join(ws, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(ws, ".git/config"), config)
	return ws, filepath.Join(ws, "config")
}

const (
	fsmonitorConfig = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = .git/fsmonitor.sh\n"
	cleanGitConfig  = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n"
	fsmonitorFound  = ".git/config:3: core.fsmonitor names a program git runs"
)

// basisEnv is an in-process basis for ws.
func basisEnv(ws, config string, stdout, stderr *bytes.Buffer) *env {
	return &env{
		stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		environ:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config},
		getwd:       func() (string, error) { return ws, nil },
		interactive: func() bool { return false },
		tty:         filepath.Join(ws, "no-tty"),
	}
}

func runBasis(t *testing.T, ws, config string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, basisEnv(ws, config, &stdout, &stderr))
	return code, stdout.String(), stderr.String()
}

// basis check warns, naming the key and never the value, when the
// repository's git config names a program git runs, and still passes.
func TestCheckWarnsAboutGitConfigPrograms(t *testing.T) {
	ws, config := gitWorkspace(t, fsmonitorConfig)
	code, out, errOut := runBasis(t, ws, config, "check")
	if code != exitOK || !strings.Contains(out, "warning: "+fsmonitorFound+"\n") {
		t.Errorf("check: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "fsmonitor.sh") {
		t.Errorf("check shows the value:\n%s", out)
	}
	ws, config = gitWorkspace(t, cleanGitConfig)
	if code, out, _ := runBasis(t, ws, config, "check"); code != exitOK || strings.Contains(out, "warning") {
		t.Errorf("check of a clean repository: exit %d, stdout:\n%s", code, out)
	}
}

// basis explain shows the warning for a git command, and not for another.
func TestExplainShowsGitConfigPrograms(t *testing.T) {
	ws, config := gitWorkspace(t, fsmonitorConfig)
	_, out, errOut := runBasis(t, ws, config, "explain", "spawn", `{"input": "!git status"}`)
	if !strings.Contains(out, "warning:     "+fsmonitorFound+"\n") {
		t.Errorf("explain of git status:\n%s%s", out, errOut)
	}
	if _, out, _ := runBasis(t, ws, config, "explain", "spawn", `{"input": "!ls -la"}`); strings.Contains(out, "warning") {
		t.Errorf("explain of ls warns:\n%s", out)
	}
	ws, config = gitWorkspace(t, cleanGitConfig)
	if _, out, _ := runBasis(t, ws, config, "explain", "spawn", `{"input": "!git status"}`); strings.Contains(out, "warning") {
		t.Errorf("explain of git status in a clean repository warns:\n%s", out)
	}
}

// A hook asked about !git status reads the warning in its request.
func TestHookIsToldAboutGitConfigPrograms(t *testing.T) {
	ws, config := gitWorkspace(t, fsmonitorConfig)
	seen := filepath.Join(ws, "request.json")
	hook := filepath.Join(ws, "hook.sh")
	executable(t, hook, "#!/bin/sh\ncat > \"$1\"\necho '{\"decision\": \"deny\", \"reason\": \"no\"}'\n")
	code, out, errOut := runBasis(t, ws, config, "call", "spawn", `{"input": "!git status"}`, "--approve", "hook:"+hook+" "+seen)
	if code != exitRefused {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var req approver.Request
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{fsmonitorFound}, req.Warnings); diff != "" {
		t.Errorf("the hook's warnings (-want +got):\n%s", diff)
	}
}

// executable writes an executable file (serve_test.go's script is not in
// a -tags nomcp build).
func executable(t *testing.T, path, text string) {
	t.Helper()
	write(t, path, text)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
