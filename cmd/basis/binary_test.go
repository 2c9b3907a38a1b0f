//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

// basisBinary is the basis command built from this package, for tests
// that need a real process: signals, /proc.
var basisBinary string

// mcpServerBinary is the example MCP server (examples/mcpserver), for
// tests of MCP servers as tools and of basis serve proxying them.
var mcpServerBinary string

// mcpTestServerBinary is mcpbind's test server, whose grow tool changes
// its tool list.
var mcpTestServerBinary string

// ttyProbeBinary tries to type into its terminal (testdata/ttyprobe).
var ttyProbeBinary string

// sandboxHelperBinary is the sandbox helper, beside basisBinary.
var sandboxHelperBinary string

// oauthBrowserBinary follows an authorization URL's redirects
// (e2e/cmd/oauthbrowser): the tests' BROWSER.
var oauthBrowserBinary string

func TestMain(m *testing.M) {
	// Tests run basis in this process too, and its sandbox may re-execute
	// the running binary to confine a program: this one, then.
	sandbox.Main()
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "basis-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		// Readable by everyone: one test runs the binary as another user.
		if err := os.Chmod(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		builds := []struct {
			out                  *string
			name, dir, pkg, what string
			flags                []string
		}{
			// The tests' basis reloads its config files often
			// (serve_testinterval.go).
			{&basisBinary, "basis", ".", ".", "basis", []string{"-tags", "basis_testinterval"}},
			{&mcpServerBinary, "mcpserver", filepath.Join("..", "..", "examples"), "./mcpserver", "the example MCP server", nil},
			{&mcpTestServerBinary, "mcptestserver", filepath.Join("..", "..", "mcpbind"), "./internal/testserver/cmd/mcptestserver", "mcpbind's test server", nil},
			{&ttyProbeBinary, "ttyprobe", ".", "./testdata/ttyprobe", "the terminal probe", nil},
			{&oauthBrowserBinary, "oauthbrowser", filepath.Join("..", "..", "e2e"), "./cmd/oauthbrowser", "the test browser", nil},
			// Beside basis, as make install puts it: as nobody, the
			// tests' calls are confined by it.
			{&sandboxHelperBinary, sandbox.HelperName, filepath.Join("..", "..", "sandbox"), "./cmd/basis-sandbox", "the sandbox helper", nil},
		}
		for _, b := range builds {
			*b.out = filepath.Join(dir, b.name)
			build := exec.Command("go", append(append([]string{"build", "-o", *b.out}, b.flags...), b.pkg)...)
			build.Dir = b.dir
			build.Stderr = os.Stderr
			if err := build.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "building "+b.what+":", err)
				return 1
			}
		}
		// The sandbox makes each workspace a cache under the user cache
		// directory: the tests' go with the binaries, not into the real one.
		os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
		return m.Run()
	}())
}

// sharedDir is a temporary directory every user may enter and read.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "basis-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSignalStopsTheCallItsProcessTreeAndIsAudited(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT} {
		t.Run(signalName(sig), func(t *testing.T) {
			ws := t.TempDir()
			// The tool forks a grandchild, says which processes it made,
			// and sleeps.
			write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {"tree": {
				"description": "Starts a process tree and waits.", "input_schema": {"type": "object"},
				"command": ["./.basis/tools/tree.sh"]}}}`)
			write(t, filepath.Join(ws, ".basis/tools/tree.sh"), "#!/bin/sh\n"+
				"exec </dev/null\n"+
				"sleep 300 &\n"+
				treePIDs+
				"sleep 301\n")
			if err := os.Chmod(filepath.Join(ws, ".basis/tools/tree.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			audit := filepath.Join(ws, "audit.jsonl")
			cmd := exec.Command(basisBinary, "-C", ws, "call", "tree", "--approve", "allow", "--audit", audit)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			pids := waitForPIDs(t, filepath.Join(ws, "pids"), exited)
			for _, pid := range pids {
				if !alive(pid) {
					t.Fatalf("process %d of the tool's tree is not running before the signal", pid)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("basis did not exit after %s; stderr:\n%s", signalName(sig), stderr.String())
			}
			if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, want, stderr.String())
			}
			if want := "basis: stopped by " + signalName(sig) + "\n"; !strings.HasSuffix(stderr.String(), want) {
				t.Errorf("stderr %q does not end with %q", stderr.String(), want)
			}
			// The process group is killed as basis returns; give the
			// kernel a moment to finish the kill.
			deadline := time.Now().Add(10 * time.Second)
			for _, pid := range pids {
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if alive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("process %d of the tool's tree outlived basis", pid)
				}
			}

			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatalf("no audit record: %v", err)
			}
			recs := auditEvents(t, data)
			if len(recs) != 2 || !callID.MatchString(recs[0].CallID) {
				t.Fatalf("want a start and an end record of one call, got:\n%s", data)
			}
			id := recs[0].CallID
			want := []auditEvent{{"start", id, "tree", ""}, {"end", id, "tree", "tool_error"}}
			if diff := cmp.Diff(want, recs); diff != "" {
				t.Errorf("audit records (-want +got):\n%s", diff)
			}
		})
	}
}

// auditEvent is what a test checks of an audit record.
type auditEvent struct {
	Event   string `json:"event"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
}

// auditEvents reads every record of an audit file.
func auditEvents(t *testing.T, data []byte) []auditEvent {
	t.Helper()
	var out []auditEvent
	for line := range strings.Lines(string(data)) {
		var rec auditEvent
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// SIGKILL gives basis no chance to write how the call ended; the record
// of what it started is on file all the same, written before the tool
// ran.
func TestSIGKILLMidCallLeavesTheStartRecord(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {"hold": {
		"description": "Waits until its gate closes.", "input_schema": {"type": "object"},
		"command": ["./.basis/tools/hold.sh"]}}}`)
	// The tool says it runs, then reads the gate until the test closes
	// it: it ends by itself, whether or not basis kills it.
	write(t, filepath.Join(ws, ".basis/tools/hold.sh"), "#!/bin/sh\n"+
		"exec </dev/null\n"+
		"echo $$ > started.tmp && mv started.tmp started\n"+
		"cat gate >/dev/null\n")
	if err := os.Chmod(filepath.Join(ws, ".basis/tools/hold.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "gate"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: the open does not wait for the tool, and the tool
	// reads until this closes.
	gate, err := os.OpenFile(filepath.Join(ws, "gate"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(basisBinary, "-C", ws, "call", "hold", "--approve", "allow", "--audit", audit)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitForPIDs(t, filepath.Join(ws, "started"), exited)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	gate.Close()

	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatalf("no audit file: %v", err)
	}
	recs := auditEvents(t, data)
	if len(recs) != 1 || !callID.MatchString(recs[0].CallID) {
		t.Fatalf("want the start record of one call, got:\n%s\nstderr:\n%s", data, stderr.String())
	}
	if diff := cmp.Diff(auditEvent{"start", recs[0].CallID, "hold", ""}, recs[0]); diff != "" {
		t.Errorf("audit record (-want +got):\n%s", diff)
	}
}

func TestSignalStopsAWaitForInput(t *testing.T) {
	ws := t.TempDir()
	cmd := exec.Command(basisBinary, "-C", ws, "call", "spawn", "-", "--approve", "allow")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
	// stdin stays open and empty: basis waits for the input.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// basis installs its signal handler before it reads its input, so
	// once it sleeps in a read of the pipe a SIGINT is basis's to handle.
	if !waitUntil(20*time.Second, func() bool { return readingAPipe(cmd.Process.Pid) }) {
		cmd.Process.Kill()
		t.Fatalf("basis never waited for its input; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("basis did not stop while waiting for input; stderr:\n%s", stderr.String())
	}
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		t.Fatalf("basis died of the SIGINT instead of handling it; stderr:\n%s", stderr.String())
	}
	if got := cmd.ProcessState.ExitCode(); got != 130 {
		t.Errorf("exit status %d, want 130; stderr:\n%s", got, stderr.String())
	}
}

// readingAPipe reports whether a thread of pid sleeps in a read of a pipe
// ("pipe_read", "anon_pipe_read" on newer kernels).
func readingAPipe(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, f := range tasks {
		if w, err := os.ReadFile(f); err == nil && strings.HasSuffix(string(w), "pipe_read") {
			return true
		}
	}
	return false
}

// waitForPIDs waits for the tool to write the ids of its processes.
// treePIDs is the line of a tool's shell script that writes, to the file
// pids, the process ids of the shell and of its children as this test
// sees them: $$ and $! are ids in the tool's own PID namespace, while
// /proc (the host's) gives the real ones.
const treePIDs = "read -r self _ < /proc/self/stat; read -r kids < /proc/$self/task/$self/children\n" +
	"echo \"$self $kids\" > pids.tmp && mv pids.tmp pids\n"

// waitUntil polls done until it holds or timeout passes and reports
// whether it held: the one bounded wait these tests use for what another
// process does in its own time (a line on stderr, a process ending).
func waitUntil(timeout time.Duration, done func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func waitForPIDs(t *testing.T, path string, exited <-chan error) []int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("basis exited before the tool started its tree: %v", err)
		default:
		}
		data, err := os.ReadFile(path)
		if err == nil {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("pids file %q", data)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the tool never wrote its process ids")
	return nil
}

// alive reports whether pid is a process that has not ended; a zombie
// nobody reaped has ended.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	// pid (comm) state …: the state follows the last ')'.
	if i := strings.LastIndexByte(line, ')'); i >= 0 && i+2 < len(line) {
		return line[i+2] != 'Z' && line[i+2] != 'X'
	}
	return true
}
