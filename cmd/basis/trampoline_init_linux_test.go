package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestTrampolineDispatchesBeforeHeavyInits: the sandbox's re-execution of
// basis (argv[0] "basis-sandbox") confines itself and executes its
// program before the JSON Schema library's initialiser, which compiles
// every draft's metaschema (about 5 ms per confined start), and before any
// of basis's own. A probe request exits 0 once its namespaces work.
func TestTrampolineDispatchesBeforeHeavyInits(t *testing.T) {
	cmd := &exec.Cmd{Path: basisBinary, Args: []string{"basis-sandbox", `{"v":3,"probe":true}`}, Env: []string{"GODEBUG=inittrace=1"}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the trampoline's probe: %v\n%s", err, stderr.String())
	}
	for _, pkg := range []string{"github.com/santhosh-tekuri/jsonschema/v6", "github.com/basis-go/basis/approver", "main"} {
		if strings.Contains(stderr.String(), "init "+pkg+" @") {
			t.Errorf("the trampoline ran %s's initialiser before it dispatched:\n%s", pkg, stderr.String())
		}
	}
}
