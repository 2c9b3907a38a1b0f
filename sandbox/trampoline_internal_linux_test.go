package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// What the trampoline reports is what the sandbox documents: its exit
// codes, its unavailable error's message on its stderr, and, on the
// restricted thread, an *UnavailableError that errors.Is ErrUnavailable.
func TestTrampolineAgreesWithTheSandbox(t *testing.T) {
	for _, tc := range []struct{ ours, its int }{
		{ExitNotConfined, trampoline.ExitNotConfined},
		{ExitCannotExecute, trampoline.ExitCannotExecute},
		{ExitNotFound, trampoline.ExitNotFound},
	} {
		if tc.ours != tc.its {
			t.Errorf("exit code %d here, %d in the trampoline", tc.ours, tc.its)
		}
	}
	if string(CutNamespace) != trampoline.CutNamespace || string(CutLandlockTCP) != trampoline.CutLandlockTCP {
		t.Errorf("network cuts differ: %q %q here, %q %q in the trampoline", CutNamespace, CutLandlockTCP, trampoline.CutNamespace, trampoline.CutLandlockTCP)
	}
	if ConfigFile != trampoline.ConfigFile {
		t.Errorf("config file %q here, %q in the trampoline", ConfigFile, trampoline.ConfigFile)
	}
	its := (&trampoline.UnavailableError{Reason: "r"}).Error()
	if ours := (&UnavailableError{Reason: "r"}).Error(); its != ours {
		t.Errorf("the trampoline says %q, the sandbox %q", its, ours)
	}
	if TmpfsBase, prefix := trampoline.TmpfsBase, trampoline.CallTempPrefix; tmpfsBase != TmpfsBase || callTempPrefix != prefix {
		t.Errorf("per-call directories differ")
	}
}

// A restricted thread's failure for want of something this machine lacks
// (here: a protected path that is a symbolic link) is the sandbox's
// *UnavailableError, as before the trampoline became a package of its own.
func TestConfineThreadFailsUnavailable(t *testing.T) {
	if !probe().threadMounts {
		t.Skip("a thread makes its mount namespace only as root")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, ".git")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	trampoline.GoOnChildlessThread(func() { done <- confineThread(spec{Version: specVersion, Protect: []string{link}}) })
	err := <-done
	var u *UnavailableError
	if !errors.As(err, &u) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("confineThread = %#v, want an *UnavailableError", err)
	}
}
