package mcpserve_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
)

// An edit seen in the middle of its write (the file truncated, its
// content not yet written) is loaded once, when a look finds the file as
// the look before did: not once half-written and once again whole, which
// restarted every MCP server twice.
func TestGatewayLoadsAnEditOnceSettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "tools.txt")
		if err := os.WriteFile(file, []byte("a"), 0o644); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var built []string
		build := func(ctx context.Context, _ func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error) {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			built = append(built, string(data))
			mu.Unlock()
			b := runtime.NewBuilder()
			for _, n := range strings.Fields(string(data)) {
				if err := b.Add(depthTool{n}); err != nil {
					return nil, err
				}
			}
			gate, err := approver.NewGate(allowAll, nil)
			if err != nil {
				return nil, err
			}
			return b.Build(&runtime.Options{Gate: gate})
		}
		gw, err := mcpserve.NewGateway(t.Context(), build, &mcpserve.GatewayOptions{Watch: []string{file}, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer gw.Close()
		builds := func() []string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), built...)
		}
		// Truncated, then a look: nothing loaded yet. (time.Sleep moves
		// the bubble's fake clock on to the next tick; nothing waits.)
		if err := os.Truncate(file, 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if got := builds(); len(got) != 1 {
			t.Fatalf("built %q after a look at a file in the middle of its write; want only the first build", got)
		}
		// The write ends; the next look sees it move again, the one
		// after that finds it settled and loads it, once.
		if err := os.WriteFile(file, []byte("a b"), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if got := builds(); len(got) != 2 || got[1] != "a b" {
			t.Fatalf("built %q; want the first build and one of the whole edit", got)
		}
	})
}
