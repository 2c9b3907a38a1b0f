//go:build unix

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTheAuditFileFollowsNoLinkInsideAWritableRoot plays a program that
// rewrote the workspace between two runs of basis: whatever it planted at
// the audit path, basis appends nothing to a file outside the workspace,
// and never hangs. Outside the workspace paths resolve as usual.
func TestTheAuditFileFollowsNoLinkInsideAWritableRoot(t *testing.T) {
	const victimText = "the operator's file\n"
	tests := []struct {
		name string
		// setup makes the files and returns the --audit path; ws is the
		// workspace (the writable root), out a directory outside it,
		// whose victim file a program would like the audit to append
		// to.
		setup func(t *testing.T, ws, out string) string
		// refused is a word the error must hold; "" means the file
		// opens, and then lands is where the written bytes must land.
		refused string
		lands   func(ws, out string) string
	}{
		{name: "a new file in the workspace",
			setup: func(t *testing.T, ws, _ string) string { return filepath.Join(ws, "audit.jsonl") },
			lands: func(ws, _ string) string { return filepath.Join(ws, "audit.jsonl") }},
		{name: "an existing file in a directory of the workspace",
			setup: func(t *testing.T, ws, _ string) string {
				write(t, filepath.Join(ws, "logs", "audit.jsonl"), "earlier\n")
				return filepath.Join(ws, "logs", "audit.jsonl")
			},
			lands: func(ws, _ string) string { return filepath.Join(ws, "logs", "audit.jsonl") }},
		{name: "a symlink as the file",
			setup: func(t *testing.T, ws, out string) string {
				symlink(t, filepath.Join(out, "victim"), filepath.Join(ws, "audit.jsonl"))
				return filepath.Join(ws, "audit.jsonl")
			},
			refused: "audit.jsonl is a symbolic link inside"},
		{name: "a dangling symlink as the file",
			setup: func(t *testing.T, ws, out string) string {
				symlink(t, filepath.Join(out, "planted"), filepath.Join(ws, "audit.jsonl"))
				return filepath.Join(ws, "audit.jsonl")
			},
			refused: "symbolic link"},
		{name: "a symlink as a directory of the path",
			setup: func(t *testing.T, ws, out string) string {
				symlink(t, out, filepath.Join(ws, "logs"))
				return filepath.Join(ws, "logs", "victim")
			},
			refused: "logs is a symbolic link inside"},
		{name: "a relative symlink deeper down",
			setup: func(t *testing.T, ws, out string) string {
				if err := os.MkdirAll(filepath.Join(ws, "a"), 0o755); err != nil {
					t.Fatal(err)
				}
				rel, err := filepath.Rel(filepath.Join(ws, "a"), out)
				if err != nil {
					t.Fatal(err)
				}
				symlink(t, rel, filepath.Join(ws, "a", "b"))
				return filepath.Join(ws, "a", "b", "victim")
			},
			refused: "b is a symbolic link inside"},
		{name: "a hard link to a file outside",
			// A hard link is one name more for the same file: appending
			// through it writes the operator's file. A sandboxed program
			// cannot make one (Landlock refuses a link that would widen
			// a file's access, and fs.protected_hardlinks a link to a
			// file its user cannot write), but a second name is never
			// what an audit log needs, so it is refused too.
			setup: func(t *testing.T, ws, out string) string {
				if err := os.Link(filepath.Join(out, "victim"), filepath.Join(ws, "audit.jsonl")); err != nil {
					t.Skipf("cannot make a hard link here: %v", err)
				}
				return filepath.Join(ws, "audit.jsonl")
			},
			refused: "has 2 hard links"},
		{name: "a FIFO",
			setup: func(t *testing.T, ws, _ string) string {
				if err := syscall.Mkfifo(filepath.Join(ws, "audit.jsonl"), 0o600); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(ws, "audit.jsonl")
			},
			refused: "is a named pipe (FIFO) inside"},
		{name: "a directory",
			setup: func(t *testing.T, ws, _ string) string {
				if err := os.Mkdir(filepath.Join(ws, "audit.jsonl"), 0o755); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(ws, "audit.jsonl")
			},
			refused: "is a directory"},
		{name: "the operator's link into the workspace, through a planted link",
			// The operator's own link is followed; inside the workspace
			// the rule holds all the same.
			setup: func(t *testing.T, ws, out string) string {
				symlink(t, out, filepath.Join(ws, "logs"))
				symlink(t, filepath.Join(ws, "logs"), filepath.Join(out, "my-logs"))
				return filepath.Join(out, "my-logs", "victim")
			},
			refused: "logs is a symbolic link inside"},
		{name: "the operator's link into a real directory of the workspace",
			setup: func(t *testing.T, ws, out string) string {
				if err := os.Mkdir(filepath.Join(ws, "logs"), 0o755); err != nil {
					t.Fatal(err)
				}
				symlink(t, filepath.Join(ws, "logs"), filepath.Join(out, "my-logs"))
				return filepath.Join(out, "my-logs", "audit.jsonl")
			},
			lands: func(ws, _ string) string { return filepath.Join(ws, "logs", "audit.jsonl") }},
		{name: "outside, through symlinked directories",
			// Operators link their home directories: outside every
			// writable root, links are followed as always.
			setup: func(t *testing.T, _, out string) string {
				if err := os.MkdirAll(filepath.Join(out, "real", "logs"), 0o755); err != nil {
					t.Fatal(err)
				}
				symlink(t, filepath.Join(out, "real"), filepath.Join(out, "home"))
				symlink(t, "../real/logs", filepath.Join(out, "real", "up"))
				return filepath.Join(out, "home", "up", "audit.jsonl")
			},
			lands: func(_, out string) string { return filepath.Join(out, "real", "logs", "audit.jsonl") }},
		{name: "outside, a symlink as the file",
			setup: func(t *testing.T, _, out string) string {
				symlink(t, "victim", filepath.Join(out, "audit-link"))
				return filepath.Join(out, "audit-link")
			},
			lands: func(_, out string) string { return filepath.Join(out, "victim") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
			for _, d := range []string{ws, out} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			victim := filepath.Join(out, "victim")
			write(t, victim, victimText)
			path := tt.setup(t, ws, out)
			roots := []string{resolvePath(ws)}

			type opened struct {
				f   *os.File
				err error
			}
			done := make(chan opened, 1)
			go func() {
				f, err := openAuditFile(path, roots)
				done <- opened{f, err}
			}()
			var got opened
			select {
			case got = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("opening the audit file blocked")
			}
			if tt.refused != "" {
				if got.err == nil {
					got.f.Close()
					t.Fatalf("opened %s, want it refused", path)
				}
				if !strings.Contains(got.err.Error(), tt.refused) {
					t.Errorf("error %q does not say %q", got.err, tt.refused)
				}
				if data, _ := os.ReadFile(victim); string(data) != victimText {
					t.Errorf("the victim file holds %q", data)
				}
				if _, err := os.Lstat(filepath.Join(out, "planted")); err == nil {
					t.Error("a dangling link's target was created")
				}
				return
			}
			if got.err != nil {
				t.Fatalf("openAuditFile: %v", got.err)
			}
			defer got.f.Close()
			if _, err := got.f.WriteString("record\n"); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(tt.lands(ws, out))
			if err != nil || !strings.HasSuffix(string(data), "record\n") {
				t.Errorf("the record did not land in %s: %q %v", tt.lands(ws, out), data, err)
			}
		})
	}
}

// A device node in the workspace is not an audit file. Making one needs
// root.
func TestTheAuditFileIsNoDevice(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "audit.jsonl")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, 1<<8|3); err != nil { // /dev/null's numbers
		t.Skipf("cannot make a device node here: %v", err)
	}
	f, err := openAuditFile(path, []string{resolvePath(ws)})
	if err == nil {
		f.Close()
		t.Fatal("a device node opened as the audit file")
	}
	if !strings.Contains(err.Error(), "is a device inside") {
		t.Errorf("error %q", err)
	}
}

// /dev/stderr and /proc/self/fd/N are the kernel's links to files basis
// has open; they are outside every writable root and work as before.
func TestTheAuditFileMayBeADescriptorOfBasis(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/fd is Linux's")
	}
	dir := t.TempDir()
	target, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	f, err := openAuditFile(fmt.Sprintf("/proc/self/fd/%d", target.Fd()), []string{resolvePath(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("record\n"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target.Name()); string(data) != "record\n" {
		t.Errorf("the log holds %q", data)
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

// The writable roots are the workspace and whatever a sandbox grants:
// the operator's write entries, for every program or one tool, and the
// cache. A tool whose sandbox is off adds nothing: it can write any file
// of the operator's without a link.
func TestAuditWritableRoots(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	shared, forOne, offDir := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".config", "basis", "sandbox.json"), fmt.Sprintf(`{"schema": 1, "write": [%q],
		"tools": {"build": {"write": [%q]}, "loose": {"mode": "off", "write": [%q]}}}`, shared, forOne, offDir))
	w, err := Open(t.Context(), &Options{Root: ws, Environ: []string{"HOME=" + home}})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := w.writableRoots()
	if err != nil {
		t.Fatal(err)
	}
	has := func(dir string) bool { return rootOf(resolvePath(dir), roots) != "" }
	for _, dir := range []string{ws, shared, forOne} {
		if !has(dir) {
			t.Errorf("%s is not among the writable roots %q", dir, roots)
		}
	}
	// Sandboxed programs write basis's own cache for the workspace, never
	// the operator's: that one is a writable root, the operator's is not.
	if cache, err := os.UserCacheDir(); err == nil {
		if has(cache) {
			t.Errorf("the operator's cache %s is among the writable roots %q", cache, roots)
		}
		if !slices.ContainsFunc(roots, func(r string) bool {
			return strings.HasPrefix(r, resolvePath(filepath.Join(cache, "basis", "sandbox"))+"/")
		}) {
			t.Errorf("no writable root lies in basis's own cache %s: %q", filepath.Join(cache, "basis", "sandbox"), roots)
		}
	}
	if has(offDir) || has(home) {
		t.Errorf("the writable roots %q hold a directory only an unsandboxed tool may write", roots)
	}
}
