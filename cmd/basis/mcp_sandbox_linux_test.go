//go:build !nomcp

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Through the built binary, sandbox on, as root and as nobody: a stdio
// MCP server runs confined — as root the sandbox starts it from a
// confined thread, as nobody through the sandbox helper beside basis, and the binding
// must start it the sandbox's way — so it writes in the workspace, not
// beside it, and has the per-call temporary directory.
func TestBinaryMCPServerRunsSandboxed(t *testing.T) {
	for _, asNobody := range []bool{false, true} {
		t.Run(map[bool]string{false: "root", true: "nobody"}[asNobody], func(t *testing.T) {
			dir := sharedDir(t)
			ws, config, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "config"), filepath.Join(dir, "outside")
			write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {}}`)
			write(t, filepath.Join(config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"t": {"command": %q, "args": ["-environ"]}}}`, mcpTestServerBinary))
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if asNobody {
				chownTree(t, dir, nobody)
			}
			tests := []struct {
				path string
				want string
			}{
				{filepath.Join(outside, "pwned"), "write=refused"},
				{filepath.Join(ws, "written"), "write=ok"},
			}
			for _, tt := range tests {
				input, _ := json.Marshal(map[string]string{"write": tt.path})
				cmd := exec.Command(basisBinary, "-C", ws, "call", "mcp__t__environ", string(input), "--approve", "allow")
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config}
				if asNobody {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("basis call: %v\n%s", err, out)
				}
				if !strings.Contains(string(out), tt.want+"\n") {
					t.Errorf("the server writing %s: want %s in:\n%s", tt.path, tt.want, out)
				}
				if tmp := varsOf(string(out))["TMPDIR"]; !strings.HasPrefix(filepath.Base(tmp), "basis-call-") {
					t.Errorf("the server's TMPDIR is %q, not the sandbox's per-call directory", tmp)
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
				t.Error("the MCP server wrote outside the workspace")
			}
			if asNobody {
				// The namespaces were made by the sandbox helper beside
				// basis (its build and basis's agree), as the probe
				// remembered.
				records, _ := filepath.Glob(filepath.Join(ws, ".cache", "basis", "probe", "*"))
				if len(records) != 1 {
					t.Fatalf("probe records %v, want one", records)
				}
				if data, err := os.ReadFile(records[0]); err != nil || string(data) != "userns helper" {
					t.Errorf("the probe remembered %q, %v; want the helper's namespaces", data, err)
				}
			}
		})
	}
}
