//go:build linux && !nomcp

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// basis serve sweeps after every call: fifty calls that each leave a
// process behind leave none, and the MCP servers it runs live on.
func TestServeAccumulatesNoOrphans(t *testing.T) {
	r := newServeRig(t)
	write(t, filepath.Join(r.config, "sandbox.json"), `{"schema": 1, "mode": "off"}`)
	s := r.serve(t, nil, "--approve", "allow")
	servers := childrenRunning(t, s.cmd.Process.Pid, mcpServerBinary)
	if len(servers) != 2 {
		t.Fatalf("basis serve runs %d MCP servers, want 2 (stockroom and shelf)", len(servers))
	}
	marker := newMarker()
	fifo := filepath.Join(r.ws, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if text, isErr := s.call(t, "spawn", map[string]any{"input": "!" + escapeCommand(marker, fifo)}); isErr {
			t.Fatalf("call %d: %s", i, text)
		}
	}
	requireNoneMarked(t, marker)
	for _, pid := range servers {
		if !alive(pid) {
			t.Errorf("MCP server %d was swept with the orphans", pid)
		}
	}
	if text, isErr := s.call(t, "mcp__shelf__stock_level", map[string]any{"name": "bracket"}); isErr {
		t.Errorf("the MCP server no longer answers: %s", text)
	}
}

// childrenRunning lists the children of pid that run program.
func childrenRunning(t *testing.T, pid int, program string) []int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, task := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(raw)) {
			child, _ := strconv.Atoi(f)
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", child)); err == nil && exe == program {
				out = append(out, child)
			}
		}
	}
	return out
}

// What a stdio MCP server leaves in a session of its own (a daemon) goes
// when basis closes the server.
func TestClosedMCPServerLeavesNothing(t *testing.T) {
	w := newProcWorld(t, false)
	marker := newMarker()
	name, value, _ := strings.Cut(marker, "=")
	write(t, filepath.Join(w.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"daemon": {"command": %q, "args": ["-daemon"], "env": {%q: %q}}}}`,
		mcpTestServerBinary, name, value))
	out, err := w.basis("tools").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mcp__daemon__echo") {
		t.Fatalf("basis tools: %v\n%s", err, out)
	}
	requireNoneMarked(t, marker)
}
