package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
)

// readOnlyTool is the policy of a manifest entry that says "sandbox":
// "read-only".
var readOnlyTool = sandbox.Policy{Mode: sandbox.ReadOnly, LimitReads: true}

// A read-only tool's program, as an attacker would write it: it tries to
// write the workspace, its .git/config and $HOME, to read $HOME's ssh keys
// and the operator's config, and to reach the network and a Unix socket.
// Each fails; it may still read the workspace and the system, write its
// TMPDIR and keep a cache there.
func TestReadOnlyTool(t *testing.T) {
	requireSandbox(t)
	workspace, outside := t.TempDir(), t.TempDir()
	home := os.Getenv("HOME")
	if home == "" {
		t.Skip("no $HOME")
	}
	writeFiles(t, workspace, map[string]string{"src.go": "package x\n", ".git/config": "[core]\n"})
	secret := filepath.Join(home, fmt.Sprintf(".basis-ro-test-%d", os.Getpid()), "id_ed25519")
	operatorConfig := filepath.Join(outside, "config", "basis", "rules.json")
	for _, f := range []string{secret, operatorConfig} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(secret)) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sock := filepath.Join(outside, "agent.sock")
	serveUnix(t, "unix", sock)

	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"read the workspace", []string{"read", filepath.Join(workspace, "src.go")}, true},
		{"read the system", []string{"read", "/etc/passwd"}, true},
		{"write TMPDIR", []string{"writeenv", "TMPDIR", "out"}, true},
		{"write its cache", []string{"writeenv", "GOCACHE", "out"}, true},
		{"write the workspace", []string{"write", filepath.Join(workspace, "out.txt")}, false},
		{"write .git/config", []string{"write", filepath.Join(workspace, ".git", "config")}, false},
		{"write $HOME", []string{"write", filepath.Join(home, fmt.Sprintf("basis-ro-test-%d", os.Getpid()))}, false},
		{"read $HOME's ssh key", []string{"read", secret}, false},
		{"read the operator's config", []string{"read", operatorConfig}, false},
		{"read /etc/shadow", []string{"read", "/etc/shadow"}, false},
		{"a grandchild reads $HOME", []string{"child", "read", secret}, false},
		{"connect to the network", []string{"connect", ln.Addr().String()}, false},
		{"connect to a Unix socket", []string{"unix", sock}, false},
	}
	sb := newSandbox(t, readOnlyTool, workspace)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, sb, workspace, tt.args...)
			if got.ok != tt.ok {
				t.Fatalf("%s: ok = %v (%s), want %v", strings.Join(tt.args, " "), got.ok, got.output, tt.ok)
			}
		})
	}
	for _, f := range []string{filepath.Join(workspace, "out.txt")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(workspace, ".git", "config")); string(data) != "[core]\n" {
		t.Errorf(".git/config changed: %q", data)
	}
}

// The same policy without LimitReads reads $HOME: the limit is what
// closes it, not the file's mode.
func TestReadOnlyModeAloneReadsHome(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	home := os.Getenv("HOME")
	if home == "" {
		t.Skip("no $HOME")
	}
	f := filepath.Join(home, fmt.Sprintf(".basis-ro-test-plain-%d", os.Getpid()))
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f) })
	if got := runHelper(t, newSandbox(t, sandbox.Policy{Mode: sandbox.ReadOnly}, workspace), workspace, "read", f); !got.ok {
		t.Fatalf("read-only mode without LimitReads could not read $HOME: %s", got.output)
	}
}

func TestDescribeLimitedReads(t *testing.T) {
	workspace := t.TempDir()
	d := newSandbox(t, readOnlyTool, workspace).Describe("")
	root, _ := filepath.EvalSymlinks(workspace)
	if len(d.Read) == 0 || d.Read[0] != sandbox.ProgramPlaceholder {
		t.Fatalf("Read = %v, want the program first", d.Read)
	}
	want := map[string]bool{root: true, "/usr": true}
	for _, r := range d.Read {
		delete(want, r)
	}
	if len(want) > 0 {
		t.Errorf("Read = %v, missing %v", d.Read, want)
	}
	for _, r := range d.Read {
		if home := os.Getenv("HOME"); home != "" && r == home {
			t.Errorf("Read names $HOME: %v", d.Read)
		}
	}
	if s := d.Summary(); !strings.Contains(s, "reads only its program, the system directories, "+root) {
		t.Errorf("Summary = %q, want it to say what the program reads", s)
	}
	if d := newSandbox(t, sandbox.Policy{Mode: sandbox.ReadOnly}, workspace).Describe(""); d.Read != nil {
		t.Errorf("without LimitReads, Read = %v, want none", d.Read)
	}
}
