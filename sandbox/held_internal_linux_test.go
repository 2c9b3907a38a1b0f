package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// The held read rules are opened in this process's mount namespace, not
// in the private one a call's thread makes to hold .git read-only (which
// a held descriptor would otherwise keep alive, and whose mounts it would
// name): every held descriptor's mount is one of this process's.
func TestHeldRulesAreOpenedInTheProcessMountNamespace(t *testing.T) {
	if os.Geteuid() != 0 || !probe().threadMounts {
		t.Skip("a call's thread makes its mount namespace only as root")
	}
	trampoline.ForgetReadable() // opened again by the call below
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/true")
	cmd.Dir = ws
	start, release, err := sb.Prepare(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	release()
	mounts := map[string]bool{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for s := bufio.NewScanner(f); s.Scan(); {
		mounts[strings.Fields(s.Text())[0]] = true
	}
	held := trampoline.HeldReadable()
	if len(held) == 0 {
		t.Fatal("no read rule is held")
	}
	for _, fd := range held {
		info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(info), "\n") {
			if id, ok := strings.CutPrefix(line, "mnt_id:"); ok && !mounts[strings.TrimSpace(id)] {
				link, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
				t.Errorf("held %s is on mount %s, which is not this process's", link, strings.TrimSpace(id))
			}
		}
	}
}

// Warm opens the read rules every ruleset names before any program
// starts, where a thread of this process confines programs; with the
// sandbox off it opens nothing, and unprivileged (where the trampoline
// opens its own) neither.
func TestWarmHoldsTheReadRules(t *testing.T) {
	if probe().abi < 1 {
		t.Skip("no Landlock here")
	}
	trampoline.ForgetReadable() // opened again by Warm
	Warm(Policy{Mode: Off})
	if held := trampoline.HeldReadable(); len(held) != 0 {
		t.Fatalf("with the sandbox off, Warm held %d read rules", len(held))
	}
	Warm(Policy{})
	held := trampoline.HeldReadable()
	switch {
	case probe().threadNetns && len(held) == 0:
		t.Fatal("Warm held no read rule")
	case !probe().threadNetns && len(held) != 0:
		t.Fatalf("unprivileged, Warm held %d read rules the trampoline opens itself", len(held))
	}
}
