//go:build unix && !nomcp

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stockroomWorkspace gives the case's workspace a .mcp.json whose server
// marks that it was started, then runs the example MCP server.
func stockroomWorkspace(t *testing.T, ws, _ string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(ws, ".basis/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mcpServerBinary, filepath.Join(ws, ".basis/bin/mcpserver")); err != nil {
		t.Fatal(err)
	}
	script(t, filepath.Join(ws, ".basis/bin/stockroom.sh"), "#!/bin/sh\necho started >> started\nexec .basis/bin/mcpserver \"$@\"\n")
	write(t, filepath.Join(ws, "data/inventory.json"), `{"warehouse": "north", "items": [{"name": "bracket", "count": 35, "bin": "C1"}]}`)
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"stockroom": {"command": ".basis/bin/stockroom.sh"}}}`)
}

func TestCLIMCP(t *testing.T) {
	stock := []string{"call", "mcp__stockroom__stock_level", `{"name": "bracket"}`, "--approve", "allow"}
	cases := []cliCase{
		// A workspace's .mcp.json starts nothing until the operator
		// trusts it; then its tools are listed and called like any.
		{name: "mcp_trust_flow", setup: stockroomWorkspace, steps: []step{
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"check"}, want: exitOK},
			{args: []string{"mcp", "list"}, want: exitOK},
			{args: stock, want: exitRefused},
			{args: []string{"rules", "add", "--tool", "mcp__stockroom__stock_level", "--allow"}, want: exitUsage},
			{args: []string{"mcp", "trust"}, want: exitOK},
			{args: []string{"mcp", "list"}, want: exitOK},
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"check", "--start"}, want: exitOK},
			{args: stock, want: exitOK},
			{args: []string{"call", "mcp__stockroom__reserve_stock", `{"name": "bracket", "count": 2}`}, want: exitRefused},
			// A rule for an MCP tool is bound to the workspace's .mcp.json.
			{args: []string{"rules", "add", "--tool", "mcp__stockroom__reserve_stock", "--allow"}, want: exitOK},
			{args: []string{"explain", "mcp__stockroom__reserve_stock", `{"name": "bracket", "count": 2}`}, want: exitOK},
			{args: []string{"call", "mcp__stockroom__reserve_stock", `{"name": "bracket", "count": 2}`}, want: exitOK},
			{args: []string{"--no-mcp", "tools"}, want: exitOK},
			{args: []string{"mcp", "untrust"}, want: exitOK},
			{args: []string{"mcp", "untrust"}, want: exitOK},
			{args: []string{"tools"}, want: exitOK},
		}},
		{name: "mcp_bad_config", setup: func(t *testing.T, ws, config string) {
			write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}, "b": {"command": "b", "env": {"TOKEN": "${UNSET_MCP_TOKEN}"}}}}`)
		}, steps: []step{
			// The format is shared with other agents: a server basis
			// cannot use is left out, with a note, and the rest works.
			{args: []string{"check"}, want: exitUsage},
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"mcp", "trust"}, want: exitOK},
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"call", "mcp__b__x", "--approve", "allow"}, want: exitRefused},
		}},
		// A workspace's cwd must lead into the workspace, for a declared
		// tool and an MCP server alike: check reports each way out, the
		// tools are listed as unavailable, and calls are refused before
		// anything runs. The messages name file, tool and field, not
		// the path.
		{name: "cwd_outside_workspace", setup: cwdOutsideWorkspace, steps: []step{
			{args: []string{"check"}, want: exitUsage},
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"call", "dotdot", "--approve", "allow"}, want: exitRefused},
			{args: []string{"call", "home", "--approve", "allow"}, want: exitRefused},
			{args: []string{"call", "escape", "--approve", "allow"}, want: exitRefused},
			{args: []string{"call", "inside", "--approve", "allow"}, want: exitOK},
			{args: []string{"mcp", "trust"}, want: exitOK},
			{args: []string{"check"}, want: exitUsage},
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"call", "mcp__out__echo", "--approve", "allow"}, want: exitRefused},
		}},
		{name: "mcp_usage", steps: []step{
			{args: []string{"mcp"}, want: exitUsage},
			{args: []string{"mcp", "trsut"}, want: exitUsage},
			{args: []string{"mcp", "trust"}, want: exitUsage},
			{args: []string{"mcp", "list"}, want: exitOK},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runCase(t, tc) })
	}
}

// cwdOutsideWorkspace declares tools, and an MCP server, whose cwd leads
// out of the workspace: by "..", by ${HOME}, by a link planted in it.
func cwdOutsideWorkspace(t *testing.T, ws, _ string) {
	t.Helper()
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {
	"dotdot": {"description": "Writes in ../../../../../../../../etc.", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "touch pwned"], "cwd": "../../../../../../../../etc"},
	"home": {"description": "Writes in HOME.", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "touch pwned"], "cwd": "${HOME}"},
	"escape": {"description": "Writes through a link.", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "touch pwned"], "cwd": "escape"},
	"inside": {"description": "Stays in.", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "pwd"], "cwd": "data/.."}
}}`)
	if err := os.Symlink("/etc", filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	// Never started: the command need not exist.
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"out": {"command": ".basis/bin/mcptestserver", "cwd": "../../../../../../../../etc"}}}`)
}

// runIn runs basis in-process in ws with config as its config dir and
// returns its exit status and stdout.
func runIn(t *testing.T, ws, config string, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		environ:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config},
		getwd:       func() (string, error) { return ws, nil },
		interactive: func() bool { return false },
	}
	code := run(context.Background(), args, e)
	return code, stdout.String() + stderr.String()
}

// The trust is in the file's exact content: nothing starts before it, and
// an edit makes the file untrusted again.
func TestWorkspaceMCPConfigStartsOnlyWhenTrusted(t *testing.T) {
	ws, config := copyWorkspace(t), t.TempDir()
	stockroomWorkspace(t, ws, config)
	started := filepath.Join(ws, "started")
	steps := []struct {
		name        string
		args        []string
		edit        bool
		wantStarted bool
		wantStatus  string
	}{
		{"untrusted", []string{"tools"}, false, false, "untrusted: run basis mcp trust"},
		{"a call of an untrusted server's tool", []string{"call", "mcp__stockroom__stock_level", `{"name": "bracket"}`, "--approve", "allow"}, false, false, "untrusted: run basis mcp trust"},
		{"trusted", []string{"mcp", "trust"}, false, false, "trusted"},
		{"listed once trusted", []string{"tools"}, false, true, "connected, 2 tools"},
		{"edited", []string{"tools"}, true, false, "untrusted: run basis mcp trust"},
		{"--no-mcp", []string{"--no-mcp", "tools"}, false, false, "greet"},
		{"trusted again", []string{"mcp", "trust"}, false, false, "trusted"},
		{"--no-mcp skips a trusted file", []string{"--no-mcp", "tools"}, false, false, "greet"},
	}
	for _, s := range steps {
		os.Remove(started)
		if s.edit {
			write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"stockroom": {"command": ".basis/bin/stockroom.sh", "args": ["-inventory", "data/inventory.json"]}}}`)
		}
		_, out := runIn(t, ws, config, s.args...)
		if !strings.Contains(out, s.wantStatus) {
			t.Errorf("%s: output does not say %q:\n%s", s.name, s.wantStatus, out)
		}
		if strings.Contains(s.name, "--no-mcp") && strings.Contains(out, "stockroom") {
			t.Errorf("%s: the MCP server is listed:\n%s", s.name, out)
		}
		_, err := os.Stat(started)
		if got := err == nil; got != s.wantStarted {
			t.Errorf("%s: server started %v, want %v", s.name, got, s.wantStarted)
		}
	}
}
