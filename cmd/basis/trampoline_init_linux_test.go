package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTrampolineDispatchesBeforeHeavyInits: the sandbox's re-execution of
// basis (argv[0] "basis-sandbox") confines itself and executes its
// program before the JSON Schema library's initialiser, which compiles
// every draft's metaschema (about 5 ms per confined start), and before any
// of basis's own: right after go-landlock, its last dependency with an
// initialiser (the sandbox's internal trampoline package imports little,
// so that the many packages sorting after golang.org/x/sys/unix — gRPC,
// protobuf, path/filepath, os/exec — do not come first). An order, not a
// time. A request of another revision is refused once the trampoline
// dispatched.
func TestTrampolineDispatchesBeforeHeavyInits(t *testing.T) {
	cmd := &exec.Cmd{Path: basisBinary, Args: []string{"basis-sandbox", `{"v":3,"rev":"another","probe":true}`}, Env: []string{"GODEBUG=inittrace=1"}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A request of another revision, refused as soon as the trampoline
	// dispatched: what ran before is in the trace.
	if err := cmd.Run(); !strings.Contains(stderr.String(), "another build") {
		t.Fatalf("the trampoline's probe: %v, not refused as another build's:\n%s", err, stderr.String())
	}
	for _, pkg := range []string{"github.com/santhosh-tekuri/jsonschema/v6", "github.com/basis-go/basis/approver", "main"} {
		if strings.Contains(stderr.String(), "init "+pkg+" @") {
			t.Errorf("the trampoline ran %s's initialiser before it dispatched:\n%s", pkg, stderr.String())
		}
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
