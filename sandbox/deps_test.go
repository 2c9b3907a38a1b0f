package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The trampoline runs in the init of sandbox/internal/trampoline, which
// Go runs only once every package it imports, directly or not, is
// initialised, and then after every package that is ready and sorts
// before it: a dependency that sorts late (path/filepath, os/exec, net)
// delays it behind most of a host's initialisers, a millisecond of every
// unprivileged confined start in the basis binary. Its dependencies are
// what confinement needs and what os, fmt and encoding/json bring anyway;
// one more must be weighed (GODEBUG=inittrace=1 on bin/basis) and added
// here. The sandbox package itself may import more, but not these.
func TestTrampolineWaitsForNoLatePackage(t *testing.T) {
	allowed := []string{
		"bufio", "bytes", "cmp", "encoding", "encoding/base64", "encoding/binary", "encoding/json",
		"errors", "fmt", "io", "io/fs", "iter", "math", "math/bits", "os", "path", "reflect",
		"slices", "sort", "strconv", "strings", "sync", "sync/atomic", "syscall", "time",
		"unicode", "unicode/utf16", "unicode/utf8", "unsafe",
		"embed", "encoding/hex", "hash", "crypto", // the Revision: a digest of the embedded sources
		"golang.org/x/sys/unix", "kernel.org/pub/linux/libs/security/libcap/psx",
		"github.com/landlock-lsm/go-landlock/landlock", "github.com/landlock-lsm/go-landlock/landlock/syscall",
		"github.com/landlock-lsm/go-landlock/landlock/internal",
		"github.com/basis-go/basis/sandbox/internal/trampoline",
	}
	out, err := exec.Command("go", "list", "-deps", "./internal/trampoline").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "internal/") || strings.HasPrefix(dep, "runtime") || strings.HasPrefix(dep, "vendor/") {
			continue // the runtime's own, initialised first
		}
		if strings.HasPrefix(dep, "crypto/") {
			continue // crypto/sha256's, which sort before every module's packages
		}
		if !slices.Contains(allowed, dep) {
			t.Errorf("the trampoline depends on %s, whose initialisation may delay its dispatch (see this test's comment)", dep)
		}
	}
	out, err = exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, late := range []string{"net", "net/http", "net/url", "os/user"} {
		if slices.Contains(deps, late) {
			t.Errorf("the sandbox package depends on %s, whose initialisation comes late in every host", late)
		}
	}
}

// The re-execution of this test binary as the trampoline dispatches right
// after go-landlock, its last dependency to be initialised: no initialiser
// of a package it does not need runs first, though this binary links
// testing, go-cmp, path/filepath and os/exec, which sort after
// golang.org/x/sys/unix. An order, not a time: GODEBUG=inittrace=1 prints
// a line per initialiser, and the trampoline's own never returns.
func TestTrampolineDispatchesRightAfterGoLandlock(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: self, Args: []string{"basis-sandbox", `{"v":3,"rev":"another","probe":true}`}, Env: []string{"GODEBUG=inittrace=1"}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A request of another revision, refused as soon as the trampoline
	// dispatched: what ran before is in the trace.
	if err := cmd.Run(); !strings.Contains(stderr.String(), "another build") {
		t.Fatalf("the trampoline's probe: %v, not refused as another build's:\n%s", err, stderr.String())
	}
	var inits []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			inits = append(inits, f[1])
		}
	}
	const last = "github.com/landlock-lsm/go-landlock/landlock"
	i := slices.Index(inits, last)
	if i < 0 {
		t.Fatalf("no initialiser of %s in the trace; the test cannot tell the order:\n%s", last, stderr.String())
	}
	if after := inits[i+1:]; len(after) > 0 {
		t.Errorf("initialisers ran after %s's and before the trampoline dispatched: %v", last, after)
	}
}
