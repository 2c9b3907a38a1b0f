package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDir mounts a one-page tmpfs and fills it. Mounting needs root;
// elsewhere the test is skipped, except in CI, where it must run.
func fullDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4k"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mounting a tmpfs: %v", err)
		}
		t.Skipf("mounting a tmpfs needs root: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	page := make([]byte, 4096)
	for range 16 {
		if _, err := filler.Write(page); errors.Is(err, syscall.ENOSPC) {
			return dir
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the 4k tmpfs took 64k without filling up")
	return ""
}

// With the audit file on a full disk, a call that would change something
// is refused before its program starts, and says why.
func TestCallOnAFullAuditDiskRunsNothing(t *testing.T) {
	ws := markWorkspace(t)
	audit := filepath.Join(fullDir(t), "audit.jsonl")
	stdout, stderr, code := basisIn(t, ws, t.TempDir(), "call", "mark", "--approve", "allow", "--audit", audit)
	if code != exitRefused {
		t.Errorf("exit %d, want %d; stdout %q stderr %q", code, exitRefused, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the tool ran: %v", err)
	}
	if !strings.HasPrefix(stdout, "mark was not run: its audit record could not be written (") || !strings.Contains(stdout, "no space left on device") {
		t.Errorf("stdout %q does not say the audit could not be written", stdout)
	}
	if !strings.Contains(stderr, "basis: refused (audit)") {
		t.Errorf("stderr %q", stderr)
	}
}
