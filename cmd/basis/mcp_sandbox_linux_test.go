//go:build !nomcp

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Through the built binary, sandbox on: a stdio MCP server runs confined
// (basis runs as root here, so the sandbox starts it from a confined
// thread, and the binding must start it that way): it writes in the
// workspace, not beside it, and has the per-call temporary directory.
func TestBinaryMCPServerRunsSandboxed(t *testing.T) {
	r := newEnvironRun(t, "")
	outside := filepath.Join(filepath.Dir(r.ws), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string
	}{
		{filepath.Join(outside, "pwned"), "write=refused"},
		{filepath.Join(r.ws, "written"), "write=ok"},
	}
	for _, tt := range tests {
		input, _ := json.Marshal(map[string]string{"write": tt.path})
		out := r.call(t, "mcp__t__environ", string(input))
		if !strings.Contains(out, tt.want+"\n") {
			t.Errorf("the server writing %s: want %s in:\n%s", tt.path, tt.want, out)
		}
		if tmp := varsOf(out)["TMPDIR"]; !strings.Contains(filepath.Base(tmp), "basis-call-") {
			t.Errorf("the server's TMPDIR is %q, not the sandbox's per-call directory", tmp)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Error("the MCP server wrote outside the workspace")
	}
}
