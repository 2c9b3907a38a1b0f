//go:build unix

package main

import (
	"os/exec"
	"regexp"
	"testing"
)

// TestCollectorTargetRaisedBeforeHeavyInits: the basis binary raises the
// collector's target (internal/gctarget) before jsonschema/v6's init
// allocates its metaschemas, so no collection runs while basis starts; a
// change of import or package path that ordered it later would lose that.
func TestCollectorTargetRaisedBeforeHeavyInits(t *testing.T) {
	cmd := exec.Command(basisBinary, "version")
	cmd.Env = []string{"GODEBUG=inittrace=1", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("basis version: %v\n%s", err, out)
	}
	order := regexp.MustCompile(`(?m)^init (github\.com/basis-go/basis/cmd/basis/internal/gctarget|github\.com/santhosh-tekuri/jsonschema/v6) `).FindAllSubmatch(out, -1)
	var got []string
	for _, m := range order {
		got = append(got, string(m[1]))
	}
	if len(got) != 2 || got[0] != "github.com/basis-go/basis/cmd/basis/internal/gctarget" {
		t.Errorf("package inits in this order: %q; want internal/gctarget before jsonschema/v6\n%s", got, out)
	}
}
