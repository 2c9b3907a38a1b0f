//go:build linux

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/e2e"
)

const (
	soakCalls       = 5000
	soakConcurrency = 16
	soakChunks      = 5 // the numbers are read after each fifth of the calls
	soakWarmup      = 200
)

// requireSoak skips a soak test unless make soak asked for it: the soak
// tests take minutes and are not part of make ci.
func requireSoak(t *testing.T) {
	t.Helper()
	if os.Getenv("BASIS_SOAK") != "1" {
		t.Skip("soak test: run make soak (BASIS_SOAK=1)")
	}
}

// usage is what must stay flat while calls keep coming. A figure that
// cannot be read is -1.
type usage struct {
	goroutines int // or, for another process, its threads
	fds        int
	children   int
	rss        int64
}

func (u usage) String() string {
	fds := "n/a"
	if u.fds >= 0 {
		fds = fmt.Sprint(u.fds)
	}
	return fmt.Sprintf("%4d goroutines/threads, %3s fds, %d children, RSS %6.1f MiB", u.goroutines, fds, u.children, mib(u.rss))
}

// soak makes soakCalls calls, soakConcurrency at a time, after a warm-up,
// and reads usage after the warm-up and after each chunk. It fails if a
// call fails, if a child process is left after a chunk, or if goroutines,
// descriptors or memory grew from the first reading to the last beyond a
// small allowance: a leak of one goroutine, descriptor or buffer per call
// would show as thousands.
func soak(t *testing.T, call func(i int) error, measure func() usage) {
	t.Helper()
	var next atomic.Int64
	runChunk := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		var failed atomic.Int64
		errs := make(chan error, soakConcurrency)
		end := next.Load() + int64(n)
		for range soakConcurrency {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > end {
						return
					}
					if err := call(int(i)); err != nil {
						if failed.Add(1) == 1 {
							errs <- fmt.Errorf("call %d: %w", i, err)
						}
						return
					}
				}
			})
		}
		wg.Wait()
		next.Store(end)
		close(errs)
		for err := range errs {
			t.Fatalf("%v (%d calls failed in this chunk)", err, failed.Load())
		}
	}

	runChunk(soakWarmup)
	first := measure()
	t.Logf("after %4d warm-up calls: %v", soakWarmup, first)
	readings := []usage{first}
	start := time.Now()
	for c := 1; c <= soakChunks; c++ {
		runChunk(soakCalls / soakChunks)
		u := measure()
		readings = append(readings, u)
		t.Logf("after %4d calls:        %v", c*soakCalls/soakChunks, u)
		if u.children != 0 {
			t.Errorf("%d child processes left after a chunk of calls finished", u.children)
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d calls, %d at a time, in %v (%.0f calls/s)", soakCalls, soakConcurrency, elapsed.Round(time.Millisecond), soakCalls/elapsed.Seconds())

	last := readings[len(readings)-1]
	if last.goroutines > first.goroutines+4 {
		t.Errorf("goroutines (or threads) grew from %d to %d over %d calls", first.goroutines, last.goroutines, soakCalls)
	}
	if first.fds >= 0 && last.fds > first.fds+4 {
		t.Errorf("open descriptors grew from %d to %d over %d calls", first.fds, last.fds, soakCalls)
	}
	// Memory moves with the garbage collector's timing; a leak of even a
	// kilobyte per call would add 5 MB, so allow that much and a quarter.
	if allowed := first.rss + max(first.rss/4, 5<<20); last.rss > allowed {
		t.Errorf("resident memory grew from %.1f MiB to %.1f MiB over %d calls (allowed: %.1f MiB)", mib(first.rss), mib(last.rss), soakCalls, mib(allowed))
	}
}

// processUsage fills in what every reading takes from the process table:
// open descriptors (when readable), child processes and resident memory.
func processUsage(t *testing.T, pid int, u *usage) {
	t.Helper()
	if n, err := e2e.OpenFiles(pid); err == nil {
		u.fds = n
	}
	kids, err := e2e.Descendants(pid)
	if err != nil {
		t.Fatal(err)
	}
	u.children = len(kids)
	m, err := e2e.ReadMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	u.rss = m.Resident
}

// selfUsage reads this test process's own usage, after a collection so
// that garbage does not read as growth.
func selfUsage(t *testing.T) func() usage {
	return func() usage {
		goruntime.GC()
		pid := os.Getpid()
		u := usage{goroutines: goruntime.NumGoroutine(), fds: -1}
		processUsage(t, pid, &u)
		return u
	}
}

// The runtime in-process: 5,000 calls of a declared /bin/cat tool, 16 at
// a time, through schema check, preview, gate and audit.
func TestSoakRuntime(t *testing.T) {
	requireSoak(t)
	ws := catWorkspace(t)
	rt := catRuntime(t, ws)
	soak(t, func(i int) error {
		out := rt.Call(t.Context(), "cat", contract.Call{ID: fmt.Sprintf("soak-%d", i), Input: json.RawMessage(benchPayload)})
		if out.Status != runtime.StatusOK || out.Text != benchPayload {
			return fmt.Errorf("%v: %q", out.Status, out.Text)
		}
		return nil
	}, selfUsage(t))
}

// serveAvailable reports whether this basis build has the serve command.
func serveAvailable(t testing.TB) bool {
	t.Helper()
	out, _ := exec.Command(basisBinary, "serve", "--help").CombinedOutput()
	return !strings.Contains(string(out), `unknown command "serve"`)
}

// connectServe starts `basis serve` on ws over stdio with a go-sdk client
// and returns the session and the basis process's id.
func connectServe(t testing.TB, ws string, extra ...string) (*mcp.ClientSession, int) {
	t.Helper()
	return connectServeConfig(t, ws, t.TempDir(), extra...)
}

// connectServeConfig is connectServe with the operator's configuration
// directory cfg (a sandbox.json in it, say).
func connectServeConfig(t testing.TB, ws, cfg string, extra ...string) (*mcp.ClientSession, int) {
	t.Helper()
	cmd := exec.Command(basisBinary, append([]string{"-C", ws, "serve"}, extra...)...)
	cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
	cmd.Stderr = io.Discard // one line per call: thousands of them here
	client := mcp.NewClient(&mcp.Implementation{Name: "basis-e2e", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to basis serve: %v", err)
	}
	t.Cleanup(func() {
		session.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	return session, cmd.Process.Pid
}

// toolText joins a tool result's text content.
func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// basis serve: the same 5,000 calls from one MCP client over stdio. The
// figures are basis's: threads (goroutines are not visible from outside),
// descriptors (where this process may list them), child processes and
// resident memory.
func TestSoakServe(t *testing.T) {
	requireSoak(t)
	if !serveAvailable(t) {
		t.Skip("this basis has no serve command yet (basis serve is not wired into cmd/basis)")
	}
	ws := catWorkspace(t)
	session, pid := connectServe(t, ws, "--approve", "allow")
	var args map[string]any
	if err := json.Unmarshal([]byte(benchPayload), &args); err != nil {
		t.Fatal(err)
	}
	soak(t, func(i int) error {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cat", Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError || toolText(res) != benchPayload {
			return fmt.Errorf("isError %v: %q", res.IsError, toolText(res))
		}
		return nil
	}, func() usage {
		u := usage{fds: -1}
		var err error
		if u.goroutines, err = e2e.Threads(pid); err != nil {
			t.Fatal(err)
		}
		processUsage(t, pid, &u)
		return u
	})
}
