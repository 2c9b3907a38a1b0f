//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// confineCall is what a Sandbox hook was asked.
type confineCall struct {
	Tool    string
	Network bool
	Dir     string
}

// A confinement (a sandbox) is asked for every stdio server as
// "mcp__<server>" with the network, in the server's working directory; it
// sees the command before it starts, may rewrite it, and is released once
// the server has exited; one that fails keeps the server from starting
// at all; one that returns a start is how the program starts.
func TestSandboxConfinesEveryStdioServer(t *testing.T) {
	dir := t.TempDir()
	for _, ownStart := range []bool{false, true} {
		t.Run(map[bool]string{false: "the binding starts it", true: "the confinement starts it"}[ownStart], func(t *testing.T) {
			var confined, released, started atomic.Int32
			var mu sync.Mutex
			var asked []confineCall
			opts := &mcpbind.ManagerOptions{Sandbox: func(tool string, network bool, d string) (*subprocess.Confinement, error) {
				mu.Lock()
				asked = append(asked, confineCall{tool, network, d})
				mu.Unlock()
				if tool == "mcp__refused" {
					return nil, errors.New("sandbox unavailable: no Landlock here")
				}
				return &subprocess.Confinement{Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
					confined.Add(1)
					// Rewrite the command, as a sandbox's trampoline does:
					// run the same program through env, which marks the
					// environment.
					env, err := exec.LookPath("env")
					if err != nil {
						return nil, nil, err
					}
					cmd.Args = append([]string{"env", "CONFINED=1", cmd.Path}, cmd.Args[1:]...)
					cmd.Path = env
					var start func() error
					if ownStart {
						start = func() error { started.Add(1); return cmd.Start() }
					}
					return start, func() { released.Add(1) }, nil
				}}, nil
			}}
			s := stdioServer("ts")
			s.Cwd = dir
			m := newManager(t, opts, s)
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
			if want := map[bool]int32{false: 0, true: 1}[ownStart]; started.Load() != want {
				t.Errorf("the confinement's start ran %d times, want %d", started.Load(), want)
			}
			mu.Lock()
			if diff := cmp.Diff([]confineCall{{"mcp__ts", true, dir}}, asked); diff != "" {
				t.Errorf("what the Sandbox hook was asked (-want +got):\n%s", diff)
			}
			mu.Unlock()

			refused := newManager(t, opts, mcpbind.ServerConfig{Name: "refused", Command: serverBin})
			err = refused.StartAll(context.Background())
			if !errors.Is(err, mcpbind.ErrStart) || !strings.Contains(err.Error(), `MCP server "refused"`) || !strings.Contains(err.Error(), "sandbox unavailable") {
				t.Errorf("a refused confinement: %v; want a start error naming the server and the sandbox's reason", err)
			}
			if len(refused.Tools()) != 0 {
				t.Errorf("a server whose confinement failed has tools: %v", toolNames(refused.Tools()))
			}
		})
	}
}
