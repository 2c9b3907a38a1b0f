package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// BenchmarkConfineSteps times, one by one, the steps that keep paths
// read-only and sockets closed, each on a fresh locked thread as a call
// does: the search for what to protect (in a small repository), the mount
// namespace with three read-only mounts, the seccomp filter. "confine"
// is what a kept thread saves each call after its first: a fresh
// childless thread handed out (GoOnChildlessThread) and confined as a
// call with nothing to protect is (the network namespace entered,
// capabilities dropped, Landlock, the filter).
func BenchmarkConfineSteps(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the mount namespace is made on a thread by root only")
	}
	ws := b.TempDir()
	for _, f := range []string{".git/config", ".basis/tools.json", ".mcp.json", "cmd/tool/main.go", "internal/a/a.go", "docs/x.md"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sb, err := New(Policy{}, ws)
	if err != nil {
		b.Fatal(err)
	}
	paths, err := sb.protectedPaths(ws)
	if err != nil || len(paths) != 3 {
		b.Fatalf("protected %q (%v)", paths, err)
	}
	onThread := func(step func() error) time.Duration {
		done := make(chan time.Duration)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends here
			began := time.Now()
			if err := step(); err != nil {
				b.Error(err)
			}
			done <- time.Since(began)
		}()
		return <-done
	}
	holdRules(false)
	call := spec{Version: specVersion, Net: trampoline.CutNamespace, Write: []string{b.TempDir()}}
	var search, mounts, filter, confine time.Duration
	for b.Loop() {
		began := time.Now()
		if _, err := sb.protectedPaths(ws); err != nil {
			b.Fatal(err)
		}
		search += time.Since(began)
		mounts += onThread(func() error { return trampoline.Protect(paths) })
		filter += onThread(func() error {
			if err := prctlNoNewPrivs(); err != nil {
				return err
			}
			return trampoline.FilterSockets(trampoline.CutNamespace)
		})
		began = time.Now()
		done := make(chan error)
		trampoline.GoOnChildlessThread(func() { done <- confineThread(call) })
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		confine += time.Since(began)
	}
	b.ReportMetric(float64(confine.Microseconds())/float64(b.N), "confine-µs/op")
	b.ReportMetric(float64(search.Microseconds())/float64(b.N), "search-µs/op")
	b.ReportMetric(float64(mounts.Microseconds())/float64(b.N), "mounts-µs/op")
	b.ReportMetric(float64(filter.Microseconds())/float64(b.N), "filter-µs/op")
}
