//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
)

// requireThreadPath skips where programs are not started from a thread of
// this process (an unprivileged user's go through the trampoline).
func requireThreadPath(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("programs start from a confined thread of this process as root only")
	}
}

// tmpState runs sbhelper tmpstate and returns what it saw of its TMPDIR:
// the path, and the rest of the line (mode, owner, entries).
func tmpState(t *testing.T, sb *sandbox.Sandbox, ws string) (dir, state string) {
	t.Helper()
	r := runHelper(t, sb, ws, "tmpstate")
	dir, state, _ = strings.Cut(strings.TrimSpace(r.output), " ")
	if !filepath.IsAbs(dir) {
		t.Fatalf("tmpstate: %q", r.output)
	}
	return dir, state
}

// From a sandbox's second call of the same kind on, calls start from a
// thread confined once and kept, and get its directory as TMPDIR. What a
// call left there — files, a directory it made unreadable, a link, a
// FIFO, the directory opened to everyone, a default ACL for another user —
// is gone before the next call gets it: the next program finds it empty,
// this user's alone.
func TestKeptDirectoryIsEmptiedAndClosedBetweenCalls(t *testing.T) {
	requireThreadPath(t)
	for _, tc := range []struct{ name, marker string }{
		{"nothing to protect", ""},
		{"a repository", ".git/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if tc.marker != "" {
				writeFiles(t, ws, map[string]string{tc.marker: ""})
			}
			sb, err := sandbox.New(sandbox.Policy{}, ws)
			if err != nil {
				t.Fatal(err)
			}
			clean := fmt.Sprintf("mode=700 uid=%d entries=0 acl=none", os.Geteuid())
			var dirs []string
			for i := range 4 {
				dir, state := tmpState(t, sb, ws)
				if state != clean {
					t.Errorf("call %d found its TMPDIR %s, want %s", i+1, state, clean)
				}
				dirs = append(dirs, dir)
			}
			// The first call starts from a thread of its own; the second
			// keeps its thread, which the third and fourth use again.
			if dirs[0] == dirs[1] || dirs[1] != dirs[2] || dirs[2] != dirs[3] {
				t.Errorf("TMPDIRs of four calls: %q, want the last three the same (one kept thread)", dirs)
			}
		})
	}
}

// A kept thread protects its paths in a mount namespace made when it was
// confined. A protected path replaced since — .git removed and made again
// outside the sandbox — is a new directory that mount namespace does not
// cover: the thread is not used again, and the next program cannot write
// the new .git either.
func TestKeptThreadIsNotReusedAfterAProtectedPathIsReplaced(t *testing.T) {
	requireThreadPath(t)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".git/config": "[core]\n"})
	sb, err := sandbox.New(sandbox.Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(ws, ".git", "config")
	var kept string
	for i := range 2 {
		if r := runHelper(t, sb, ws, "write", config); r.ok {
			t.Fatalf("call %d wrote the protected .git/config", i+1)
		}
		kept, _ = tmpState(t, sb, ws)
	}
	if err := os.RemoveAll(filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, map[string]string{".git/config": "[core]\n"})
	if r := runHelper(t, sb, ws, "write", config); r.ok {
		t.Fatal("after .git was made again, a call wrote .git/config")
	}
	if dir, _ := tmpState(t, sb, ws); dir == kept {
		t.Errorf("the thread kept before .git was replaced was used again (TMPDIR %s)", dir)
	}
}

// Calls that run at the same time never share a directory: a kept
// thread serves one call at a time, and the others get threads of their
// own.
func TestConcurrentCallsGetDirectoriesOfTheirOwn(t *testing.T) {
	requireThreadPath(t)
	ws := t.TempDir()
	sb, err := sandbox.New(sandbox.Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tmpState(t, sb, ws) // a thread is kept from here on
	}
	seen := map[string]bool{}
	for range 3 {
		cmd := exec.Command(helper, "env", "TMPDIR")
		cmd.Dir = ws
		_, release, err := sb.Prepare(cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		var tmp string
		for _, kv := range cmd.Env {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmp = v
			}
		}
		if tmp == "" || seen[tmp] {
			t.Fatalf("a call prepared while others hold theirs got TMPDIR %q (held: %v)", tmp, seen)
		}
		seen[tmp] = true
	}
}

// Landlock grants a directory, not a name: a writable directory removed
// and made again since a thread was kept is not the one its rules grant.
// The thread is not used again, and the next program writes the new one.
func TestKeptThreadIsNotReusedAfterAWritableDirectoryIsReplaced(t *testing.T) {
	requireThreadPath(t)
	ws, extra := t.TempDir(), t.TempDir()
	sb, err := sandbox.New(sandbox.Policy{Write: []string{extra}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := runHelper(t, sb, ws, "write", filepath.Join(extra, fmt.Sprint(i))); !r.ok {
			t.Fatalf("call %d could not write the extra directory: %s", i+1, r.output)
		}
	}
	if err := os.RemoveAll(extra); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runHelper(t, sb, ws, "write", filepath.Join(extra, "after")); !r.ok {
		t.Errorf("after the directory was made again, a call could not write it: %s", r.output)
	}
}
