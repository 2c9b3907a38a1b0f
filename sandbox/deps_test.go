package sandbox_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The trampoline runs in this package's init, which Go runs only once
// every package it imports, directly or not, is initialised, in an order
// that puts late-sorting import paths late: in the basis binary, net came
// some twenty packages after the rest, a millisecond of every
// unprivileged confined start. None of these may come back.
func TestTrampolineWaitsForNoLatePackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, late := range []string{"net", "net/http", "net/url", "os/user"} {
		if slices.Contains(deps, late) {
			t.Errorf("the sandbox package depends on %s, whose initialisation delays the trampoline's", late)
		}
	}
}
