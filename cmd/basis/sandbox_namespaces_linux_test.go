//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whoever runs basis — root or an ordinary user, for whom basis is not
// dumpable and so may not write its child's uid_map — a sandboxed command
// without the network runs in network and PID namespaces of its own, as
// the user who ran basis (issue 19, item 7: an ordinary user silently got
// Landlock's TCP rules only).
func TestSandboxedCommandsGetTheirNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run basis as root and as nobody")
	}
	hostNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	hostPID, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	for _, asNobody := range []bool{false, true} {
		name := "root"
		if asNobody {
			name = "nobody"
		}
		t.Run(name, func(t *testing.T) {
			w := newProcWorld(t, asNobody)
			// newProcWorld turns the sandbox off; this test wants it on,
			// as it is by default.
			if err := os.Remove(filepath.Join(w.config, "sandbox.json")); err != nil {
				t.Fatal(err)
			}
			cmd := w.basis("call", "spawn", spawnInput(`readlink /proc/self/ns/net /proc/self/ns/pid; id -u; head -n 1 /proc/self/uid_map`), "--approve", "allow")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("basis call: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 4 {
				t.Fatalf("the command printed %q, want four lines", out)
			}
			uid := "0"
			if asNobody {
				uid = "65534"
			}
			if lines[0] == hostNet {
				t.Errorf("the command ran in basis's network namespace %s", hostNet)
			}
			if lines[1] == hostPID {
				t.Errorf("the command ran in basis's PID namespace %s", hostPID)
			}
			if lines[2] != uid {
				t.Errorf("the command ran as uid %s, want %s", lines[2], uid)
			}
			if f := strings.Fields(lines[3]); len(f) < 2 || f[0] != uid || f[1] != uid {
				t.Errorf("uid_map %q does not map uid %s to itself", lines[3], uid)
			}
		})
	}
}
