package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asOrdinaryUser makes cmd run as nobody when the test runs as root:
// root (CAP_SYS_PTRACE) may read any process's /proc files, dumpable or
// not, so only a same-user reader shows what non-dumpable protects.
func asOrdinaryUser(t *testing.T, cmd *exec.Cmd) {
	if os.Getuid() != 0 {
		return
	}
	// Another user must reach the binary: every directory above it must
	// let others through.
	for dir := filepath.Dir(basisBinary); ; dir = filepath.Dir(dir) {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			t.Skipf("running as root, and %s does not let another user reach the built basis; set TMPDIR to a directory every user may enter", dir)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// peek is a command that names its parent and prints the parent's
// environment, or says it cannot. $PPID would not do: a sandboxed command
// is the first process of a PID namespace, whose parent is outside it
// (0); /proc/self/stat, read from the host's /proc, has the real one.
const peek = `read -r _ _ _ ppid _ < /proc/self/stat; echo "parent: $(cat /proc/$ppid/comm)"; tr '\0' '\n' < /proc/$ppid/environ || echo "environ: unreadable"`

func TestCommandsCannotReadBasisEnvironment(t *testing.T) {
	const secret = "canary-in-basis-environment-51f0"
	ws := sharedDir(t)
	input := `{"input": "!` + strings.ReplaceAll(strings.ReplaceAll(peek, `\`, `\\`), `"`, `\"`) + `"}`
	cmd := exec.Command(basisBinary, "-C", ws, "call", "spawn", input, "--approve", "allow")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config"), "BASIS_TEST_SECRET=" + secret}
	asOrdinaryUser(t, cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("basis: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String() + stderr.String()
	if strings.Contains(out, secret) {
		t.Fatalf("a command basis started read basis's environment:\n%s", out)
	}
	// The command did look, at the right process, and was refused.
	for _, want := range []string{"parent: basis\n", "environ: unreadable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDumpableParentsEnvironmentIsReadable is the control: the same
// command under a parent that did not make itself non-dumpable reads the
// secret, so the test above fails for basis's code, not for this machine.
func TestDumpableParentsEnvironmentIsReadable(t *testing.T) {
	const secret = "canary-in-shell-environment-9a3d"
	cmd := exec.Command("/bin/sh", "-c", `/bin/sh -c "$PEEK"; true`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PEEK=" + peek, "SECRET=" + secret}
	asOrdinaryUser(t, cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "SECRET="+secret) {
		t.Fatalf("a same-user child could not read a dumpable parent's environment here, so the test above proves nothing:\n%s", out)
	}
}
