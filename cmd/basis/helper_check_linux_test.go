package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/sandbox"
)

// basis check says why a sandbox helper installed beside basis is not
// used (here: others may write it), and says nothing once it is: an
// operator would otherwise see calls slower than they should be, and no
// reason.
func TestCheckSaysWhyTheSandboxHelperIsNotUsed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("run as root, which runs basis as nobody: root needs no helper")
	}
	dir := sharedDir(t)
	bin, ws := filepath.Join(dir, "bin"), filepath.Join(dir, "ws")
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {}}`)
	chownTree(t, ws, nobody)
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{basisBinary: "basis", sandboxHelperBinary: sandbox.HelperName} {
		data, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(filepath.Join(bin, to), data, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	helper := filepath.Join(bin, sandbox.HelperName)
	check := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "basis"), "-C", ws, "check")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("basis check: %v\n%s", err, out)
		}
		return string(out)
	}
	if err := os.Chmod(helper, 0o775); err != nil {
		t.Fatal(err)
	}
	want := "warning: the sandbox helper is not used: " + helper + " may be written by its group or others; each sandboxed call starts basis itself instead, which takes longer\n"
	if out := check(); !strings.Contains(out, want) {
		t.Errorf("basis check with a group-writable helper said:\n%s\nwant the line:\n%s", out, want)
	}
	if err := os.Chmod(helper, 0o755); err != nil {
		t.Fatal(err)
	}
	if out := check(); strings.Contains(out, "helper") || !strings.HasPrefix(out, "ok: ") {
		t.Errorf("basis check with a helper it uses said:\n%s", out)
	}
}
