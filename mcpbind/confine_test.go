//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind"
)

// A confinement (a sandbox) sees every stdio server's command before it
// starts, may rewrite it, and is released once the server has exited; one
// that fails keeps the server from starting at all.
func TestConfineWrapsEveryStdioServer(t *testing.T) {
	var confined, released atomic.Int32
	var servers []string
	opts := mcpbind.Options{Confine: func(server string, cmd *exec.Cmd) (func(), error) {
		confined.Add(1)
		servers = append(servers, server)
		if server == "refused" {
			return nil, errors.New("sandbox unavailable: no Landlock here")
		}
		// Rewrite the command, as a sandbox's trampoline does: run the
		// same program through env, which marks the environment.
		cmd.Args = append([]string{"env", "CONFINED=1", cmd.Path}, cmd.Args[1:]...)
		env, err := exec.LookPath("env")
		if err != nil {
			return nil, err
		}
		cmd.Path = env
		return func() { released.Add(1) }, nil
	}}
	m := newManager(t, opts, stdioServer("ts"))
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, tool(t, m, "ts", "echo"), `{"a": 1}`)
	if err != nil || !strings.Contains(res.Text, `echo {"a":1}`) {
		t.Fatalf("call through the rewritten command: %q, %v", res.Text, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for released.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if confined.Load() != 1 || released.Load() != 1 {
		t.Errorf("confined %d times, released %d times; want 1 and 1", confined.Load(), released.Load())
	}

	refused := newManager(t, opts, mcpbind.ServerConfig{Name: "refused", Command: serverBin})
	err = refused.StartAll(context.Background())
	if !errors.Is(err, mcpbind.ErrStart) || !strings.Contains(err.Error(), `MCP server "refused"`) || !strings.Contains(err.Error(), "sandbox unavailable") {
		t.Errorf("a refused confinement: %v; want a start error naming the server and the sandbox's reason", err)
	}
	if len(refused.Tools()) != 0 {
		t.Errorf("a server whose confinement failed has tools: %v", toolNames(refused.Tools()))
	}
}
