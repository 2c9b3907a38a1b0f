//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
)

// serverBin is the in-repo MCP test server, built once for every test.
var serverBin string

func TestMain(m *testing.M) {
	if fifo := os.Getenv(holdEnv); fifo != "" {
		os.Exit(holdServer(fifo))
	}
	dir, err := os.MkdirTemp("", "mcpbind-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if serverBin, err = testserver.BuildProgram(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stdioServer configures the test server as a host's stdio server.
func stdioServer(name string, args ...string) mcpbind.ServerConfig {
	return mcpbind.ServerConfig{Name: name, Type: mcpbind.TypeStdio, Command: serverBin, Args: args}
}

// newManager loads servers as a host's and returns a Manager closed when
// the test ends.
func newManager(t testing.TB, opts *mcpbind.ManagerOptions, servers ...mcpbind.ServerConfig) *mcpbind.Manager {
	t.Helper()
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Host: servers})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	m := mcpbind.NewManager(cfg, opts)
	t.Cleanup(func() { m.Close() })
	return m
}

// tool returns the server's tool whose name on the server is remote.
func tool(t testing.TB, m *mcpbind.Manager, server, remote string) contract.ExecutableTool {
	t.Helper()
	tools, err := m.ServerTools(context.Background(), server)
	if err != nil && !errors.Is(err, mcpbind.ErrNameCollision) {
		t.Fatalf("ServerTools(%s): %v", server, err)
	}
	want := mcpbind.ToolName(server, remote)
	for _, tl := range tools {
		if tl.Descriptor().Name == want {
			return tl
		}
	}
	t.Fatalf("server %s has no tool %s", server, want)
	return nil
}

func toolNames(tools []contract.ExecutableTool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Descriptor().Name)
	}
	return names
}

func call(t testing.TB, tl contract.ExecutableTool, input string) (contract.Result, error) {
	t.Helper()
	return tl.Execute(context.Background(), contract.Call{ID: "1", Input: []byte(input)})
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// holdEnv makes the test binary a host that starts the test server (whose
// path is in serverEnv), writes the server's pid to the FIFO it names,
// and waits to be killed.
const (
	holdEnv   = "MCPBIND_TEST_HOLD"
	serverEnv = "MCPBIND_TEST_SERVER"
)

func holdServer(fifo string) int {
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Host: []mcpbind.ServerConfig{
		// Stubborn: it ignores the end of its stdin, which the host's death
		// brings, and forks a grandchild whose pid it writes beside ours.
		{Name: "ts", Type: mcpbind.TypeStdio, Command: os.Getenv(serverEnv), Args: []string{"-stubborn", fifo + ".pids"}},
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var pid int
	m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{Track: func(cmd *exec.Cmd, start func() error) (func(), error) {
		err := start()
		if cmd.Process != nil {
			pid = cmd.Process.Pid
		}
		return func() {}, err
	}})
	if err := m.StartAll(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(fifo, []byte(strconv.Itoa(pid)+"\n"), 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	time.Sleep(time.Hour)
	return 1
}
