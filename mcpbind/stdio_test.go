//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
)

var baseTools = []string{
	"mcp__ts__crash", "mcp__ts__echo", "mcp__ts__fail", "mcp__ts__grow", "mcp__ts__header",
	"mcp__ts__image", "mcp__ts__leak", "mcp__ts__mixed", "mcp__ts__progress", "mcp__ts__protoerr", "mcp__ts__quiet", "mcp__ts__sleep",
	"mcp__ts__structured",
}

func TestStdioListsEveryPage(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts", "-page", "3", "-extra", "4"))
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(baseTools), "mcp__ts__extra00", "mcp__ts__extra01", "mcp__ts__extra02", "mcp__ts__extra03")
	slices.Sort(want)
	if diff := cmp.Diff(want, toolNames(m.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("connected, 17 tools", m.Status()[0].String()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestStdioCalls(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts"))
	tests := []struct {
		tool, input string
		want        string
		wantErr     error
		errHas      []string
	}{
		{tool: "echo", input: `{"b": 2, "a": "x"}`, want: `echo {"a":"x","b":2}`},
		{tool: "image", input: `{}`, want: "[image image/png, 1234 bytes]"},
		{tool: "structured", input: `{}`, want: `{"n":1,"ok":true}`},
		{tool: "fail", input: `{}`, wantErr: mcpbind.ErrToolError, errHas: []string{`MCP server "ts"`, `call tool "fail"`, "it broke: no such ticket"}},
		{tool: "protoerr", input: `{}`, wantErr: mcpbind.ErrProtocol, errHas: []string{`MCP server "ts"`, "ticket id must be a number"}},
		{tool: "echo", input: `[1]`, wantErr: contract.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := call(t, tool(t, m, "ts", tt.tool), tt.input)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want one wrapping %v", err, tt.wantErr)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Text); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStdioProgress(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts"))
	var mu sync.Mutex
	var lines []string
	ctx := contract.WithProgress(context.Background(), func(line string) {
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	})
	res, err := tool(t, m, "ts", "progress").Execute(ctx, contract.Call{Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" {
		t.Errorf("result = %q, want done", res.Text)
	}
	want := []string{"step 1 (1/3)", "step 2 (2/3)", "step 3 (3/3)"}
	// A notification sent just before the result may be handled just
	// after it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(lines)
		mu.Unlock()
		if len(got) >= len(want) || time.Now().After(deadline) {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("progress lines (-want +got):\n%s", diff)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStdioCrashMidCallFailsThenRestarts(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts"))
	crash := tool(t, m, "ts", "crash")
	_, err := call(t, crash, `{}`)
	if !errors.Is(err, mcpbind.ErrServerDied) {
		t.Fatalf("error = %v, want one wrapping ErrServerDied", err)
	}
	var se *mcpbind.ServerError
	if !errors.As(err, &se) || se.Server != "ts" {
		t.Fatalf("error %v is not a *ServerError naming ts", err)
	}
	for _, s := range []string{`MCP server "ts"`, "not retried", "fatal: the crash tool was called"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if st := m.Status()[0]; st.State != mcpbind.StateFailed {
		t.Errorf("status after the crash = %v, want failed", st)
	}
	res, err := call(t, tool(t, m, "ts", "echo"), `{"again":true}`)
	if err != nil {
		t.Fatalf("the call after the crash: %v", err)
	}
	if res.Text != `echo {"again":true}` {
		t.Errorf("result = %q", res.Text)
	}
	// The tool value bound before the crash works too: it reaches the
	// restarted server.
	res, err = call(t, crash, `{}`)
	if !errors.Is(err, mcpbind.ErrServerDied) {
		t.Errorf("the second crash: %v, %q", err, res.Text)
	}
}

func TestStdioCloseKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	const grace = 300 * time.Millisecond
	m := newManager(t, &mcpbind.ManagerOptions{CloseGrace: grace}, stdioServer("ts", "-stubborn", pidFile))
	if err := m.Start(context.Background(), "ts"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		t.Fatalf("pid file holds %q", data)
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > grace+time.Second {
		t.Errorf("Close took %v, more than the grace period and a second", took)
	}
	// The server is reaped by Close; the grandchild, re-parented, may take
	// a moment to be reaped by init.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived Close", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if members := groupMembers(t, pids[0]); len(members) > 0 {
		t.Errorf("processes %v of the server's group outlived Close", members)
	}
}

// groupMembers lists the live (not zombie) processes in process group
// pgid, from /proc.
func groupMembers(t *testing.T, pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to list the process group from")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest) // state, ppid, pgrp, ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) // no /proc: trust kill
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestStdioLongAndCollidingNames(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts", "-long", "-collide"))
	tools, err := m.ServerTools(context.Background(), "ts")
	if !errors.Is(err, mcpbind.ErrNameCollision) {
		t.Fatalf("error = %v, want one wrapping ErrNameCollision", err)
	}
	for _, s := range []string{`"a.b"`, `"a_b"`, "mcp__ts__a_b"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	long := mcpbind.ToolName("ts", testserver.LongToolName)
	if len(long) != contract.MaxNameLen || !contract.ValidName(long) {
		t.Fatalf("long name %q is not a valid %d-character name", long, contract.MaxNameLen)
	}
	names := toolNames(tools)
	if !slices.Contains(names, long) {
		t.Errorf("tools %v lack the long one %s", names, long)
	}
	if slices.Contains(names, "mcp__ts__a_b") {
		t.Errorf("tools %v hold a colliding name", names)
	}
	res, err := call(t, tool(t, m, "ts", testserver.LongToolName), `{"x":1}`)
	if err != nil || res.Text != `echo {"x":1}` {
		t.Errorf("calling the long-named tool: %q, %v", res.Text, err)
	}
	if s, ok := mcpbind.ServerFor(m, long); !ok || s != "ts" {
		t.Errorf("ServerFor(%s) = %q, %v", long, s, ok)
	}
}

func TestStdioListChanged(t *testing.T) {
	changed := make(chan []string, 4)
	m := newManager(t, &mcpbind.ManagerOptions{OnToolsChanged: func(source string, tools []contract.ExecutableTool) {
		if source == "host#ts" {
			changed <- toolNames(tools)
		}
	}}, stdioServer("ts"))
	if _, err := call(t, tool(t, m, "ts", "grow"), `{}`); err != nil {
		t.Fatal(err)
	}
	select {
	case names := <-changed:
		if !slices.Contains(names, "mcp__ts__grown") {
			t.Errorf("the new list %v lacks mcp__ts__grown", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnToolsChanged was not called")
	}
	if !slices.Contains(toolNames(m.Tools()), "mcp__ts__grown") {
		t.Errorf("Tools() lacks the new tool")
	}
	res, err := call(t, tool(t, m, "ts", "grown"), `{}`)
	if err != nil || res.Text != "echo {}" {
		t.Errorf("calling the new tool: %q, %v", res.Text, err)
	}
}

func TestStdioStartFailureNamesServerWithStderr(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{},
		stdioServer("good"),
		mcpbind.ServerConfig{Name: "bad", Command: serverBin, Args: []string{"-no-such-flag"}},
		mcpbind.ServerConfig{Name: "missing", Command: filepath.Join(t.TempDir(), "nothing-here")},
	)
	err := m.StartAll(context.Background())
	if !errors.Is(err, mcpbind.ErrStart) {
		t.Fatalf("StartAll = %v, want ErrStart", err)
	}
	for _, s := range []string{`MCP server "bad"`, "flag provided but not defined", `MCP server "missing"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	got := map[string]string{}
	for _, st := range m.Status() {
		got[st.Server] = string(st.State)
	}
	want := map[string]string{"bad": "failed", "good": "connected", "missing": "failed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if len(m.Tools()) != len(baseTools) {
		t.Errorf("got %d tools, want the good server's %d", len(m.Tools()), len(baseTools))
	}
}

func TestLazyStartStartsOnlyTheServerNeeded(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, &mcpbind.ManagerOptions{},
		stdioServer("a", "-stubborn", filepath.Join(dir, "a")),
		stdioServer("b", "-stubborn", filepath.Join(dir, "b")),
	)
	server, ok := mcpbind.ServerFor(m, "mcp__a__echo")
	if !ok || server != "a" {
		t.Fatalf("ServerFor = %q, %v", server, ok)
	}
	if _, err := call(t, tool(t, m, server, "echo"), `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Errorf("server a did not start: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Errorf("server b started: %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	slow := stdioServer("slow", "-delay", "3s")
	slow.StartupTimeout = 200 * time.Millisecond
	quick := stdioServer("quick")
	quick.CallTimeout = 100 * time.Millisecond
	m := newManager(t, &mcpbind.ManagerOptions{}, slow, quick)

	start := time.Now()
	err := m.Start(context.Background(), "slow")
	if !errors.Is(err, mcpbind.ErrStart) || !strings.Contains(err.Error(), "within 200ms") || !strings.Contains(err.Error(), "startup_timeout_ms") {
		t.Errorf("Start(slow) = %v, want a startup timeout that says how to raise it", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 200ms startup timeout took %v", took)
	}

	_, err = call(t, tool(t, m, "quick", "sleep"), `{"MS": 2000}`)
	if !errors.Is(err, mcpbind.ErrCallTimeout) || !strings.Contains(err.Error(), `MCP server "quick"`) {
		t.Errorf("slow call = %v, want ErrCallTimeout naming the server", err)
	}
	// The server is still there for the next call.
	if res, err := call(t, tool(t, m, "quick", "echo"), `{}`); err != nil || res.Text != "echo {}" {
		t.Errorf("the call after a timeout: %q, %v", res.Text, err)
	}
}

func TestCallsAfterCloseFail(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts"))
	echo := tool(t, m, "ts", "echo")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, echo, `{}`); !errors.Is(err, mcpbind.ErrClosed) {
		t.Errorf("a call after Close = %v, want ErrClosed", err)
	}
	if st := m.Status()[0]; st.State != mcpbind.StateClosed {
		t.Errorf("status after Close = %v", st)
	}
}
