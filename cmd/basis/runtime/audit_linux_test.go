//go:build linux

package runtime_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// fullDisk mounts a one-page tmpfs and fills it, and returns a file open
// for appending on it. Mounting needs root; elsewhere the test is skipped,
// except in CI, where it must run.
func fullDisk(t *testing.T) *os.File {
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
	f, err := os.OpenFile(filepath.Join(dir, "audit.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	page := make([]byte, 4096)
	for range 16 {
		if _, err := filler.Write(page); errors.Is(err, syscall.ENOSPC) {
			return f
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the 4k tmpfs took 64k without filling up")
	return nil
}

// On a disk that is really full, a consequential call is refused before
// its program starts, and says so; a read still runs.
func TestAFullDiskRefusesConsequentialCalls(t *testing.T) {
	audit := fullDisk(t)
	marker := filepath.Join(t.TempDir(), "ran")
	// The helper creates the marker only if it runs.
	writes := newProcessTool("mark", "-touch", marker)
	reads := newHostTool("look", contract.SideEffectNone)
	var reported []error
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: audit,
		OnAuditError: func(err error) { reported = append(reported, err) }}, writes, reads)

	out := rt.Call(t.Context(), "mark", contract.Call{ID: "c1", Input: json.RawMessage(`{}`)})
	if out.Status != runtime.StatusRefused || out.Stage != runtime.StageAudit || !errors.Is(out.Err, syscall.ENOSPC) {
		t.Errorf("outcome %v/%v %v, want refused at the audit stage with ENOSPC", out.Status, out.Stage, out.Err)
	}
	if !strings.Contains(out.Text, "no space left on device") {
		t.Errorf("text %q does not say the disk is full", out.Text)
	}
	if writes.executes.Load() != 0 {
		t.Error("Execute was called")
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program ran: %v", err)
	}
	if len(reported) != 1 {
		t.Errorf("reported %v, want the end record's failure", reported)
	}

	if out := rt.Call(t.Context(), "look", contract.Call{ID: "c2", Input: json.RawMessage(`{"text":"x"}`)}); out.Status != runtime.StatusOK {
		t.Errorf("a read on a full disk: %v %q, want it run", out.Status, out.Text)
	}
}
