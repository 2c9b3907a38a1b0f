//go:build linux

package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	nomcpOnce   sync.Once
	nomcpBinary string
	nomcpErr    error
)

// buildNoMCP builds basis with the nomcp tag: no MCP code at all.
func buildNoMCP(t *testing.T) string {
	t.Helper()
	nomcpOnce.Do(func() {
		nomcpBinary = filepath.Join(binDir, "basis-nomcp")
		nomcpErr = goBuild(filepath.Join(repoDir(), "cmd", "basis"), nomcpBinary, "-tags", "nomcp", ".")
	})
	if nomcpErr != nil {
		t.Fatal(nomcpErr)
	}
	return nomcpBinary
}

// deps lists the packages cmd/basis is built from with the given tags.
func deps(t *testing.T, tags string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, ".")
	cmd.Dir = filepath.Join(repoDir(), "cmd", "basis")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q: %v", tags, err)
	}
	return strings.Fields(string(out))
}

func mcpPackages(pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		if strings.Contains(p, "modelcontextprotocol") || strings.HasSuffix(p, "/mcpbind") || strings.Contains(p, "/mcpbind/") {
			out = append(out, p)
		}
	}
	return out
}

// A host that wants no MCP builds basis with -tags nomcp: not one package
// of the MCP SDK or of mcpbind is linked in.
func TestNoMCPBuildHoldsNoMCPPackage(t *testing.T) {
	if got := mcpPackages(deps(t, "nomcp")); len(got) != 0 {
		t.Errorf("go list -deps -tags nomcp ./cmd/basis lists MCP packages: %v", got)
	}
	// The check above means something only if the ordinary build does link
	// MCP in; until mcpbind is wired into cmd/basis it cannot.
	if len(mcpPackages(deps(t, ""))) == 0 {
		t.Log("the default build of cmd/basis links no MCP package yet (mcpbind is not wired in): the nomcp check passes trivially")
	}
}

// The nomcp build still lists and calls declared tools and spawn on the
// example workspace.
func TestNoMCPBuildRunsTheExampleWorkspace(t *testing.T) {
	bin := buildNoMCP(t)
	ws := exampleWorkspace(t)
	cfg := t.TempDir()

	tools := runBasis(t, bin, cfg, "-C", ws, "tools")
	if tools.code != 0 {
		t.Fatalf("basis tools: exit %d\n%s%s", tools.code, tools.stdout, tools.stderr)
	}
	var names []string
	for _, row := range toolRows(tools.stdout) {
		names = append(names, strings.Fields(row)[0])
	}
	if diff := cmp.Diff([]string{"spawn", "json_query", "ticket", "word_count"}, names); diff != "" {
		t.Errorf("basis tools names (-want +got):\n%s\n%s", diff, tools.stdout)
	}

	tests := []struct {
		name, tool, input string
		code              int
		stdout            string
	}{
		{"declared", "word_count", `{"path": "data/notes.txt"}`, 0, "data/notes.txt: 2 lines, 14 words, 82 characters\n"},
		{"json", "json_query", `{"file": "data/inventory.json", "path": "items.0.name"}`, 0, "bolt\n"},
		// Refused before running: the path is not a string.
		{"invalid input", "json_query", `{"file": "data/inventory.json", "path": 7}`, 3, ""},
		{"spawn", "spawn", `{"input": "!echo from spawn"}`, 0, "from spawn\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runBasis(t, bin, cfg, "-C", ws, "call", tt.tool, tt.input, "--approve", "allow")
			if got.code != tt.code {
				t.Fatalf("basis call %s: exit %d, want %d\nstdout: %s\nstderr: %s", tt.tool, got.code, tt.code, got.stdout, got.stderr)
			}
			if tt.stdout != "" && got.stdout != tt.stdout {
				t.Errorf("basis call %s printed %q, want %q", tt.tool, got.stdout, tt.stdout)
			}
		})
	}
}

// A workspace .mcp.json means nothing to the nomcp build, which says so
// instead of ignoring it silently.
func TestNoMCPBuildReportsMCPConfigNotInThisBuild(t *testing.T) {
	if len(mcpPackages(deps(t, ""))) == 0 {
		t.Skip("mcpbind is not wired into cmd/basis yet: the nomcp build cannot differ from the default one")
	}
	bin := buildNoMCP(t)
	ws := exampleWorkspace(t)
	writeFiles(t, ws, map[string]string{".mcp.json": `{"mcpServers": {"notes": {"command": "/bin/false"}}}`})
	cfg := t.TempDir()
	for _, cmd := range []string{"tools", "check"} {
		got := runBasis(t, bin, cfg, "-C", ws, cmd)
		if !strings.Contains(got.stdout+got.stderr, "not in this build") {
			t.Errorf("basis %s with a .mcp.json in the nomcp build does not say MCP is not in this build:\nstdout: %s\nstderr: %s", cmd, got.stdout, got.stderr)
		}
	}
}
