//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
)

// BenchmarkSandboxedCat runs /bin/cat with a small payload, plain and
// sandboxed, alternating in the same loop so both see the same machine;
// it reports the ratio of their mean times (the target is ≤ 1.15). In an
// empty workspace the sandbox has nothing to keep read-only; in a
// repository it holds .git, .basis and .mcp.json in a mount namespace of
// the call's own, after searching the tree for nested repositories.
func BenchmarkSandboxedCat(b *testing.B) {
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	b.Run("empty", func(b *testing.B) { benchmarkCat(b, b.TempDir()) })
	b.Run("repository", func(b *testing.B) {
		ws := b.TempDir()
		for _, dir := range []string{".git/objects", ".git/refs", ".basis", "cmd/tool", "internal/a", "internal/b", "docs"} {
			if err := os.MkdirAll(filepath.Join(ws, dir), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		for _, f := range []string{".git/config", ".basis/tools.json", ".mcp.json", "go.mod", "cmd/tool/main.go"} {
			if err := os.WriteFile(filepath.Join(ws, f), []byte("{}"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		benchmarkCat(b, ws)
	})
}

func benchmarkCat(b *testing.B, workspace string) {
	sb, err := sandbox.New(sandbox.Policy{}, workspace)
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte(strings.Repeat(`{"path": "a"}`, 64))
	run := func(confine bool) time.Duration {
		cmd := exec.Command("/bin/cat")
		cmd.Env = []string{}
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		began := time.Now()
		start, release := cmd.Start, func() {}
		if confine {
			if start, release, err = sb.Prepare(cmd); err != nil {
				b.Fatal(err)
			}
		}
		if err := start(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		release()
		d := time.Since(began)
		if !bytes.Equal(out.Bytes(), payload) {
			b.Fatal("cat did not echo its input")
		}
		return d
	}
	// The per-call temporary directory is part of the sandbox's cost; its
	// mkdir and removal alone are timed too, since they depend on the
	// disk under os.TempDir() more than on the sandbox.
	tempDir := func() time.Duration {
		began := time.Now()
		dir, err := os.MkdirTemp("", "basis-call-")
		if err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		return time.Since(began)
	}
	var plain, confined, tmp time.Duration
	for b.Loop() {
		plain += run(false)
		confined += run(true)
		tmp += tempDir()
	}
	b.ReportMetric(float64(tmp.Microseconds())/float64(b.N), "tmpdir-µs/op")
	b.ReportMetric(float64(plain.Microseconds())/float64(b.N), "plain-µs/op")
	b.ReportMetric(float64(confined.Microseconds())/float64(b.N), "sandboxed-µs/op")
	b.ReportMetric(float64(confined)/float64(plain), "ratio")
}
