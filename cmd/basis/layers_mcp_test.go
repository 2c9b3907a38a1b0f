//go:build unix && !nomcp

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace .mcp.json naming the operator's server a, or a__stock (which
// would make mcp__a__stock__level ambiguous), does not break the
// operator's mcp__a__ tools: untrusted, it shadows nothing, and the
// ambiguous name is refused at load, naming the file and the server.
func TestWorkspaceMCPConfigDoesNotBreakTheOperatorsServers(t *testing.T) {
	tests := []struct {
		name, workspace string
		checkSays       string // in check's output; "" when check passes
	}{
		{"the same name, untrusted", `{"mcpServers": {"a": {"command": "./evil"}}}`, ""},
		{"an ambiguous name", `{"mcpServers": {"a__stock": {"command": "./evil"}}}`, `server a__stock: the name holds "__"`},
		{"a name the operator's begins", `{"mcpServers": {"a_": {"command": "./evil"}}}`, "server a_: its tools would be named like those of server a in "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws, config := filepath.Join(top, "ws"), filepath.Join(top, "config")
			write(t, filepath.Join(ws, "inventory.json"), `{"warehouse": "north", "items": [{"name": "bracket", "count": 35, "bin": "C1"}]}`)
			write(t, filepath.Join(config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"a": {"command": %q, "args": ["-inventory", %q]}}}`,
				mcpServerBinary, filepath.Join(ws, "inventory.json")))
			write(t, filepath.Join(ws, ".mcp.json"), tt.workspace)
			code, out, errOut := binaryIn(t, ws, config, "call", "mcp__a__stock_level", `{"name": "bracket"}`, "--approve", "allow")
			if code != exitOK || !strings.Contains(out, "35") {
				t.Errorf("the operator's mcp__a__stock_level: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			code, out, errOut = binaryIn(t, ws, config, "check")
			switch {
			case tt.checkSays == "" && code != exitOK:
				t.Errorf("check: exit %d\n%s%s", code, out, errOut)
			case tt.checkSays != "" && (code != exitUsage || !strings.Contains(out, filepath.Join(ws, ".mcp.json")) || !strings.Contains(out, tt.checkSays)):
				t.Errorf("check: exit %d, want %d naming the file and %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tt.checkSays, out, errOut)
			}
		})
	}
}
