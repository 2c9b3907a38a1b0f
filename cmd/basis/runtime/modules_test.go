//go:build unix

package runtime_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A host that embeds the runtime sees in its module graph what the
// runtime requires. The runtime imports no binding and nothing of the
// CLI's, so a host that uses spawn alone, or declared alone, never sees
// the other, nor the MCP SDK or the shell parser.
func TestModuleGraphHoldsNoBinding(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "all")
	// The module alone, as a host resolves it: no workspace, and the
	// go.mod as committed (readonly: the test never rewrites it).
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/basis-go/basis/declared",
		"github.com/basis-go/basis/spawn",
		"github.com/basis-go/basis/mcpbind",
		"github.com/basis-go/basis/cmd/basis",
		"github.com/modelcontextprotocol",
		"mvdan.cc/sh",
	}
	if !strings.HasPrefix(string(out), "github.com/basis-go/basis/cmd/basis/runtime\n") {
		t.Fatalf("go list -m all did not list this module first:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		path := strings.Fields(line)[0]
		for _, f := range forbidden {
			if path == f || strings.HasPrefix(path, f+"/") {
				t.Errorf("the runtime's module graph holds %s (%s)", path, line)
			}
		}
	}
}
