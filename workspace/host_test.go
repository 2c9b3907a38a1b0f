//go:build linux

package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
)

// hostTool, set in the environment, makes the test binary the ten-line
// host of e2e/hosts/minimal: it calls that tool with $HOST_INPUT in the
// workspace it is started in.
const hostTool = "WORKSPACE_TEST_HOST_TOOL"

func TestMain(m *testing.M) {
	// As every host must: the sandbox re-executes this binary to confine
	// a program where it cannot from a thread of its own (an
	// unprivileged user), and Main is what then confines it.
	if err := Main(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if tool := os.Getenv(hostTool); tool != "" {
		os.Exit(host(tool, os.Getenv("HOST_INPUT")))
	}
	os.Exit(m.Run())
}

// host is e2e/hosts/minimal's main.
func host(tool, input string) int {
	ctx := context.Background()
	ws, err := Open(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ws.Close()
	rt, err := ws.Runtime(ctx, &RuntimeOptions{Approver: approver.AllowAll(), Audit: "audit.jsonl"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := rt.Call(ctx, tool, contract.Call{ID: "1", Input: []byte(input)})
	fmt.Printf("%s: %s\n", out.Status, out.Text)
	return 0
}

// The fixture of e2e/hosts/minimal/testdata/ws, which release-check runs
// the host in outside the repository.
const (
	hostManifest = `{"schema": 1, "tools": {
	"word_count": {"description": "Count words.", "input_schema": {"type": "object"}, "command": ["wc", "-w"]},
	"escape": {"description": "Write outside the workspace.", "input_schema": {"type": "object"}, "command": ["touch", "../escaped"], "side_effect": "process"},
	"deploy": {"description": "Deploy.", "input_schema": {"type": "object"}, "command": ["echo", "deployed"], "side_effect": "external"}}}`
	hostRules = `{"schema": 2, "rules": [{"tool": "deploy", "decision": "deny", "reason": "this workspace never deploys"}]}`
)

// TestAHostGetsTheSandboxAndTheLayers runs the ten-line host, as root
// and as an unprivileged user: the workspace is found from where it runs,
// a program cannot write outside the workspace, the workspace's rules
// deny a call the host's approver allows, and the audit records the
// sandbox.
func TestAHostGetsTheSandboxAndTheLayers(t *testing.T) {
	if err := checkSandbox(sandbox.Policy{}); err != nil {
		t.Skipf("this machine cannot sandbox: %v", err)
	}
	for _, tc := range []struct {
		name string
		uid  uint32
	}{{"as root", 0}, {"as nobody", 65534}} {
		t.Run(tc.name, func(t *testing.T) {
			if os.Getuid() != 0 {
				t.Skip("running the host as another user needs root")
			}
			base := readableTempDir(t)
			bin := filepath.Join(base, "host")
			copyFile(t, os.Args[0], bin, 0o755)
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			write(t, filepath.Join(ws, ".basis", "tools.json"), hostManifest)
			write(t, filepath.Join(ws, ".basis", "rules.json"), hostRules)
			if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{ws, home} {
				chownAll(t, dir, int(tc.uid))
			}
			run := func(tool, input string) string {
				cmd := exec.Command(bin)
				cmd.Dir = filepath.Join(ws, "sub") // found by walking up
				cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, hostTool + "=" + tool, "HOST_INPUT=" + input}
				if tc.uid != 0 {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: tc.uid, Gid: tc.uid}}
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("the host %s: %v\n%s", tool, err, out)
				}
				return string(out)
			}
			if got := run("word_count", `{"text": "one two three"}`); got != "ok: 3\n" {
				t.Errorf("word_count: %q, want %q", got, "ok: 3\n")
			}
			if got := run("escape", `{}`); !strings.HasPrefix(got, "tool_error: ") || !strings.Contains(got, "Permission denied") {
				t.Errorf("escape: %q, want a failure to write", got)
			}
			if _, err := os.Lstat(filepath.Join(base, "escaped")); err == nil {
				t.Error("a program wrote outside the workspace")
			}
			if got := run("deploy", `{}`); got != "refused: tool deploy denied: this workspace never deploys\n" {
				t.Errorf("deploy: %q, want the workspace's denial", got)
			}
			audit, err := os.ReadFile(filepath.Join(ws, "sub", "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(audit), `"sandbox":{"mode":"workspace-write"`) {
				t.Errorf("the audit records no sandbox:\n%s", audit)
			}
		})
	}
}

// readableTempDir is a temporary directory every user may enter.
func readableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "workspace-host-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
