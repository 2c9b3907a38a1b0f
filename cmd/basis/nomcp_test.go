//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built with -tags nomcp holds no MCP code at all.
func TestNoMCPBuildHasNoMCPCode(t *testing.T) {
	tests := []struct {
		tags    string
		wantMCP bool
	}{
		{"nomcp", false},
		{"", true}, // the test would pass vacuously if the name were wrong
	}
	for _, tt := range tests {
		cmd := exec.Command("go", "list", "-deps", "-tags", tt.tags, ".")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tt.tags, err, stderr.String())
		}
		var mcp []string
		for _, pkg := range strings.Fields(string(out)) {
			if strings.Contains(pkg, "modelcontextprotocol") || strings.HasSuffix(pkg, "/mcpbind") || strings.Contains(pkg, "/mcpbind/") {
				mcp = append(mcp, pkg)
			}
		}
		if got := len(mcp) > 0; got != tt.wantMCP {
			t.Errorf("-tags %q: MCP packages %q; want some: %v", tt.tags, mcp, tt.wantMCP)
		}
	}
}

// Without MCP in the build, a present .mcp.json is reported, not silently
// ignored, and the rest works.
func TestNoMCPBuildReportsMCPConfigs(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "basis-nomcp")
	build := exec.Command("go", "build", "-tags", "nomcp", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	ws := copyWorkspace(t)
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"stockroom": {"command": "stockroom"}}}`)
	tests := []struct {
		args     []string
		want     int
		wantText string
	}{
		{[]string{"tools"}, exitOK, "basis: note: .mcp.json: MCP servers are not in this build (built with -tags nomcp); its servers are not loaded"},
		{[]string{"check"}, exitOK, "warning: .mcp.json: MCP servers are not in this build"},
		{[]string{"--no-mcp", "tools"}, exitOK, "greet"},
		{[]string{"serve"}, exitUsage, "serve: MCP is not in this build"},
		{[]string{"mcp", "list"}, exitUsage, "mcp: MCP is not in this build"},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, append([]string{"-C", ws}, tt.args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != tt.want || !strings.Contains(string(out), tt.wantText) {
			t.Errorf("basis %s: exit %d, want %d, and %q in:\n%s", strings.Join(tt.args, " "), code, tt.want, tt.wantText, out)
		}
		if tt.args[0] == "--no-mcp" && strings.Contains(string(out), "not in this build") {
			t.Errorf("--no-mcp still reports the MCP config:\n%s", out)
		}
	}
}
