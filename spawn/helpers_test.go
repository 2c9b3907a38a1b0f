//go:build unix

package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the code produces now; got:\n%s", path, got)
	}
}

// callOf is a call whose input field is s.
func callOf(s string) contract.Call {
	raw, err := json.Marshal(map[string]string{"input": s})
	if err != nil {
		panic(err)
	}
	return contract.Call{ID: "call_1", Input: raw}
}

// newTool builds a tool for root or fails the test.
func newTool(t testing.TB, root string, opts *spawn.Options) *spawn.Tool {
	t.Helper()
	tool, err := spawn.New(root, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tool
}

// recordingExecutor is a target that records what it was asked to run and
// answers with a fixed result.
type recordingExecutor struct {
	mu       sync.Mutex
	requests []spawn.CommandRequest
	result   spawn.CommandResult
	err      error
}

func (e *recordingExecutor) RunCommand(ctx context.Context, req spawn.CommandRequest) (spawn.CommandResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, req)
	return e.result, e.err
}

func (e *recordingExecutor) calls() []spawn.CommandRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]spawn.CommandRequest(nil), e.requests...)
}

func exited(code int) spawn.CommandEnd {
	return spawn.CommandEnd{ExitCode: code}
}

// recordingDelegator records each task and the depth it was delegated at.
type recordingDelegator struct {
	mu     sync.Mutex
	tasks  []string
	depths []int
	answer string
	err    error
}

func (d *recordingDelegator) Delegate(ctx context.Context, task string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tasks = append(d.tasks, task)
	d.depths = append(d.depths, contract.DelegationDepth(ctx))
	return d.answer, d.err
}

func (d *recordingDelegator) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.tasks)
}

// lines collects progress lines from several goroutines.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(line string) { l.mu.Lock(); l.all = append(l.all, line); l.mu.Unlock() }

func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

// writeScript writes an executable shell script to dir and returns its path.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// readPID reads a pid a command wrote to file.
func readPID(t *testing.T, file string) int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the command wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether pid is a running process: present and not a
// zombie waiting for init to reap it.
func alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	// The state letter follows the parenthesised command name.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
