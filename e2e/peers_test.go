//go:build linux

package e2e_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/e2e"
)

// markVar marks every MCP server process a test has basis start (set in
// the server's "env" in mcp.json, so inherited by whatever the server
// starts): after basis exits, no process may carry it.
const markVar = "BASIS_E2E_MARK"

// requirePeers skips a test against the real MCP peers unless make e2e
// asked for it, and fails (never skips) when it did but Node or the
// installed peers are missing. It returns the peers' bin directory.
func requirePeers(t *testing.T) string {
	t.Helper()
	if os.Getenv("BASIS_E2E") != "1" {
		t.Skip("end-to-end test against real MCP peers (Node): run make e2e")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("BASIS_E2E=1 but Node is not installed (%v): install nodejs and npm (.ci/run does)", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(wd, "peers", "node_modules", ".bin")
	for _, peer := range []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-inspector"} {
		if _, err := os.Stat(filepath.Join(bin, peer)); err != nil {
			t.Fatalf("the pinned peer %s is not installed: run npm ci in e2e/peers (make e2e does): %v", peer, err)
		}
	}
	return bin
}

func newMark(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "e2e-" + hex.EncodeToString(b)
}

// assertNoneLeft fails if any process still carries the mark after what:
// basis must stop every server it started, and their children, before it
// exits. A process killed an instant ago may still be on its way out, so
// the table is read again for up to a second.
func assertNoneLeft(t *testing.T, mark, what string) {
	t.Helper()
	var left []e2e.Process
	for range 20 {
		var err error
		if left, err = e2e.WithEnv(markVar, mark); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("after %s, processes basis started are still running: %v", what, left)
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGKILL) // so one failure does not spill into the next test
	}
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTPEverything starts server-everything's streamable HTTP transport
// on port, as a server someone else runs, and waits until it listens. It
// is stopped, with everything it started, when the test ends.
func startHTTPEverything(t *testing.T, bin string, port int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "mcp-server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("server-everything over HTTP exited before listening on %d: %s", port, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything over HTTP is not listening on %d after 30 s: %s", port, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clientSetup is a workspace and an operator configuration whose mcp.json
// starts server-everything and server-filesystem over stdio, and reaches a
// server-everything over streamable HTTP.
type clientSetup struct {
	ws, cfg, mark    string
	allowed, outside string
}

func newClientSetup(t *testing.T, bin string) clientSetup {
	t.Helper()
	s := clientSetup{ws: t.TempDir(), cfg: t.TempDir(), mark: newMark(t), allowed: t.TempDir(), outside: t.TempDir()}
	writeFiles(t, s.allowed, map[string]string{"notes.txt": "hello from inside the allowed root\n"})
	writeFiles(t, s.outside, map[string]string{"private.txt": "this text must not be read\n"})
	port := freePort(t)
	startHTTPEverything(t, bin, port)
	config := map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{
			"command": filepath.Join(bin, "mcp-server-everything"), "args": []string{"stdio"},
			"env": map[string]string{markVar: s.mark},
		},
		"files": map[string]any{
			"command": filepath.Join(bin, "mcp-server-filesystem"), "args": []string{s.allowed},
			"env": map[string]string{markVar: s.mark},
		},
		"everything_http": map[string]any{"type": "http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", port)},
	}}
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, s.cfg, map[string]string{"mcp.json": string(data)})
	return s
}

// basis as a client: the tools of three real servers (two over stdio, one
// over streamable HTTP) are listed and called under mcp__ names, and no
// server outlives a basis run.
func TestBasisListsAndCallsRealMCPServers(t *testing.T) {
	bin := requirePeers(t)
	s := newClientSetup(t, bin)

	tools := runBasis(t, basisBinary, s.cfg, "-C", s.ws, "tools")
	if tools.code != 0 {
		t.Fatalf("basis tools: exit %d\nstdout: %s\nstderr: %s", tools.code, tools.stdout, tools.stderr)
	}
	for _, name := range []string{
		"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__trigger-long-running-operation",
		"mcp__files__read_text_file", "mcp__files__list_allowed_directories", "mcp__everything_http__echo",
	} {
		if !strings.Contains(tools.stdout, name) {
			t.Errorf("basis tools does not list %s:\n%s", name, tools.stdout)
		}
	}
	assertNoneLeft(t, s.mark, "basis tools")

	tests := []struct {
		name, tool, input string
		code              int
		want              []string // each must be in what basis printed
		not               []string // none may be
	}{
		{"echo over stdio", "mcp__everything__echo", `{"message": "hello through basis"}`, 0, []string{"Echo: hello through basis"}, nil},
		{"echo over HTTP", "mcp__everything_http__echo", `{"message": "hello over HTTP"}`, 0, []string{"Echo: hello over HTTP"}, nil},
		{"sum", "mcp__everything__get-sum", `{"a": 2, "b": 3}`, 0, []string{"The sum of 2 and 3 is 5."}, nil},
		{"read inside the allowed root", "mcp__files__read_text_file", fmt.Sprintf(`{"path": %q}`, filepath.Join(s.allowed, "notes.txt")), 0,
			[]string{"hello from inside the allowed root"}, nil},
		// The server refuses; basis reports a tool error in the server's
		// own words.
		{"read outside the allowed root", "mcp__files__read_text_file", fmt.Sprintf(`{"path": %q}`, filepath.Join(s.outside, "private.txt")), 1,
			[]string{"Access denied", "outside allowed directories"}, []string{"this text must not be read"}},
		// The schema is the server's own: basis refuses before calling.
		{"input against the server's schema", "mcp__everything__get-sum", `{"a": "two", "b": 3}`, 3, []string{"/a", "number"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runBasis(t, basisBinary, s.cfg, "-C", s.ws, "call", tt.tool, tt.input, "--approve", "allow")
			if got.code != tt.code {
				t.Errorf("basis call %s: exit %d, want %d\nstdout: %s\nstderr: %s", tt.tool, got.code, tt.code, got.stdout, got.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.stdout, w) {
					t.Errorf("basis call %s printed %q, want it to contain %q", tt.tool, got.stdout, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got.stdout+got.stderr, n) {
					t.Errorf("basis call %s printed %q", tt.tool, n)
				}
			}
			assertNoneLeft(t, s.mark, "basis call "+tt.tool)
		})
	}
}

// A long-running MCP tool's progress notifications reach the terminal
// while it runs, as basis's status line on stderr; the servers basis
// started, and their children, are gone once it exits.
func TestBasisShowsMCPProgressWhileTheToolRuns(t *testing.T) {
	bin := requirePeers(t)
	s := newClientSetup(t, bin)
	const tool = "mcp__everything__trigger-long-running-operation"

	master, tty := openPTY(t)
	cmd := exec.Command(basisBinary, "-C", s.ws, "call", tool, `{"duration": 3, "steps": 3}`, "--approve", "allow")
	cmd.Env = basisEnv("BASIS_CONFIG_DIR="+s.cfg, "TERM=xterm")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty // stdin: /dev/null, so nobody is asked
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()

	var exited atomic.Bool
	var mu sync.Mutex
	var screen bytes.Buffer
	progressWhileRunning := false
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			if !exited.Load() && strings.Contains(screen.String(), "["+tool+"]") {
				progressWhileRunning = true
			}
			mu.Unlock()
			if err != nil {
				return // EIO once basis closed the terminal's last descriptor
			}
		}
	}()

	// While the call runs, the servers are basis's descendants: record
	// them, to look for them again once basis has gone.
	var servers []e2e.Process
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-waitErr:
			break wait
		case <-tick.C:
			if d, err := e2e.Descendants(cmd.Process.Pid); err == nil && len(d) > len(servers) {
				servers = d
			}
		}
	}
	exited.Store(true)
	<-readerDone
	if err != nil {
		t.Fatalf("basis call %s: %v\nstdout: %s\nterminal: %q", tool, err, stdout.String(), screen.String())
	}
	if want := "Long running operation completed"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q does not contain %q", stdout.String(), want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !progressWhileRunning {
		t.Errorf("no progress line [%s] reached the terminal while the call ran; the terminal got %q", tool, screen.String())
	}
	if len(servers) == 0 {
		t.Error("no server process was ever seen below basis")
	}
	for _, p := range servers {
		if now, err := e2e.ReadProcess(p.PID); err == nil && now.Name == p.Name {
			t.Errorf("%v, started by basis for the call, is still running after basis exited", p)
		} else if err != nil && !errors.Is(err, e2e.ErrNoProcess) {
			t.Error(err)
		}
	}
	assertNoneLeft(t, s.mark, "basis call "+tool)
}

// openPTY opens a pseudo-terminal: basis shows progress only when its
// stderr is a terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 200}); err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// inspect runs the MCP Inspector's CLI mode against `basis -C ws serve
// --approve allow`, as a user of the Inspector would, and decodes the JSON
// it prints.
func inspect(t *testing.T, bin, ws, cfg string, method ...string) map[string]any {
	t.Helper()
	args := append([]string{"--cli", basisBinary, "-C", ws, "serve", "--approve", "allow"}, method...)
	cmd := exec.Command(filepath.Join(bin, "mcp-inspector"), args...)
	// The Inspector hands its environment to the server it starts.
	cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("mcp-inspector %s did not finish in 2 minutes\nstdout: %s\nstderr: %s", strings.Join(method, " "), stdout.String(), stderr.String())
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left behind
	if err != nil {
		t.Fatalf("mcp-inspector %s: %v\nstdout: %s\nstderr: %s", strings.Join(method, " "), err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("mcp-inspector %s printed no JSON object (%v):\n%s\nstderr: %s", strings.Join(method, " "), err, stdout.String(), stderr.String())
	}
	return out
}

// basis as a server: the MCP Inspector lists and calls, through basis
// serve, a declared tool, spawn and a proxied server-everything tool.
func TestInspectorDrivesBasisServe(t *testing.T) {
	bin := requirePeers(t)
	ws, cfg, mark := t.TempDir(), t.TempDir(), newMark(t)
	writeFiles(t, ws, map[string]string{".basis/tools.json": `{"schema": 1, "tools": {"cat": {
		"description": "Echo the input.",
		"input_schema": {"type": "object", "required": ["job"], "properties": {"job": {"type": "string"}}},
		"command": ["/bin/cat"]
	}}}`})
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{
		"command": filepath.Join(bin, "mcp-server-everything"), "args": []string{"stdio"},
		"env": map[string]string{markVar: mark},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, cfg, map[string]string{"mcp.json": string(config)})

	listed := inspect(t, bin, ws, cfg, "--method", "tools/list")
	var names []string
	tools, _ := listed["tools"].([]any)
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				names = append(names, name)
			}
		}
	}
	for _, want := range []string{"cat", "spawn", "mcp__everything__echo"} {
		if !contains(names, want) {
			t.Errorf("tools/list through basis serve does not list %s; it lists %v", want, names)
		}
	}
	assertNoneLeft(t, mark, "mcp-inspector tools/list")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"declared", []string{"--tool-name", "cat", "--tool-arg", "job=deploy"}, `{"job":"deploy"}`},
		{"spawn", []string{"--tool-name", "spawn", "--tool-arg", "input=!echo through basis serve"}, "through basis serve"},
		{"proxied", []string{"--tool-name", "mcp__everything__echo", "--tool-arg", "message=proxied by basis"}, "Echo: proxied by basis"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := inspect(t, bin, ws, cfg, append([]string{"--method", "tools/call"}, tt.args...)...)
			if isErr, _ := out["isError"].(bool); isErr {
				t.Errorf("tools/call %v: isError: %v", tt.args, out)
			}
			var texts []string
			content, _ := out["content"].([]any)
			for _, c := range content {
				if m, ok := c.(map[string]any); ok && m["type"] == "text" {
					texts = append(texts, fmt.Sprint(m["text"]))
				}
			}
			if diff := cmp.Diff([]string{tt.want}, texts); diff != "" {
				t.Errorf("tools/call %v text (-want +got):\n%s", tt.args, diff)
			}
			assertNoneLeft(t, mark, "mcp-inspector tools/call "+tt.name)
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
