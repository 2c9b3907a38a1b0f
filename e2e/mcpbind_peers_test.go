//go:build linux

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/e2e"
	"github.com/basis-go/basis/mcpbind"
)

// mcpbind, the library basis's MCP client is, against the same real
// servers as the CLI tests: a host embedding it gets their tools, calls
// them, sees progress, and Close leaves no server process behind.
func TestMCPBindWithRealServers(t *testing.T) {
	bin := requirePeers(t)
	s := newClientSetup(t, bin)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cfg, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{ConfigDir: s.cfg})
	if err != nil {
		t.Fatalf("loading %s: %v", filepath.Join(s.cfg, mcpbind.OperatorFileName), err)
	}
	m := mcpbind.NewManager(cfg, nil)
	closed := false
	defer func() {
		if !closed {
			m.Close()
		}
	}()
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("starting the servers: %v (%v)", err, m.Status())
	}
	tools := map[string]contract.ExecutableTool{}
	for _, tool := range m.Tools() {
		tools[tool.Descriptor().Name] = tool
	}
	for _, name := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__files__read_text_file", "mcp__everything_http__echo"} {
		if tools[name] == nil {
			t.Fatalf("no tool %s among %d: %v", name, len(tools), m.Status())
		}
	}
	if running, err := e2e.WithEnv(markVar, s.mark); err != nil || len(running) == 0 {
		t.Fatalf("the stdio servers are not in the process table while connected: %v %v", running, err)
	}

	tests := []struct {
		name, tool, input string
		want              string // in the result text, or in the error for failed calls
		fails             bool
	}{
		{"echo over stdio", "mcp__everything__echo", `{"message":"hi"}`, "Echo: hi", false},
		{"echo over HTTP", "mcp__everything_http__echo", `{"message":"hi over HTTP"}`, "Echo: hi over HTTP", false},
		{"sum", "mcp__everything__get-sum", `{"a":2,"b":3}`, "The sum of 2 and 3 is 5.", false},
		{"read inside", "mcp__files__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(s.allowed, "notes.txt")), "hello from inside the allowed root", false},
		{"read outside", "mcp__files__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(s.outside, "private.txt")), "Access denied - path outside allowed directories", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tools[tt.tool].Execute(ctx, contract.Call{ID: tt.name, Input: json.RawMessage(tt.input)})
			switch {
			case tt.fails && err == nil:
				t.Fatalf("%s succeeded with %q; want the server's refusal", tt.tool, res.Text)
			case tt.fails && !strings.Contains(err.Error(), tt.want):
				t.Errorf("%s error %q does not carry the server's words %q", tt.tool, err, tt.want)
			case tt.fails && strings.Contains(err.Error(), "must not be read"):
				t.Errorf("%s error shows the file's text: %q", tt.tool, err)
			case !tt.fails && err != nil:
				t.Fatalf("%s: %v", tt.tool, err)
			case !tt.fails && !strings.Contains(res.Text, tt.want):
				t.Errorf("%s gave %q, want it to contain %q", tt.tool, res.Text, tt.want)
			}
		})
	}

	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var lines []string
		pctx := contract.WithProgress(ctx, func(line string) {
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
		})
		res, err := tools["mcp__everything__trigger-long-running-operation"].Execute(pctx, contract.Call{ID: "progress", Input: json.RawMessage(`{"duration":2,"steps":2}`)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, "Long running operation completed") {
			t.Errorf("result %q", res.Text)
		}
		mu.Lock()
		defer mu.Unlock()
		// The server sends its last notification just before its result,
		// and the SDK may hand the two over in either order: the first
		// step's, a second before the result, must have arrived.
		if len(lines) < 1 {
			t.Errorf("no progress line arrived while the 2-step operation ran")
		}
	})

	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	closed = true
	assertNoneLeft(t, s.mark, "Manager.Close")
}
