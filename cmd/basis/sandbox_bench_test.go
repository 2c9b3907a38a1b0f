//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/sandbox"
	"github.com/basis-go/basis/subprocess"
	basisws "github.com/basis-go/basis/workspace"
)

// BenchmarkDeclaredCatSandboxed alternates a declared /bin/cat call
// without a sandbox and with basis's default one (workspace-write, no
// network) in one loop, and reports each one's time per call and their
// ratio: the cost of the sandbox on a call, measured against a baseline
// in the same run.
func BenchmarkDeclaredCatSandboxed(b *testing.B) {
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		b.Skipf("this machine cannot sandbox: %v", err)
	}
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".basis"), 0o755); err != nil {
		b.Fatal(err)
	}
	manifest := `{"schema": 1, "tools": {"cat": {"description": "Echoes its input.", "input_schema": {"type": "object"}, "command": ["/bin/cat"]}}}`
	if err := os.WriteFile(filepath.Join(root, ".basis", "tools.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	load := func(sb subprocess.Confiner) *declared.Tool {
		tools, err := declared.Load(context.Background(), root, &declared.Options{Environ: []string{"PATH=/usr/bin:/bin"}, Sandbox: sb})
		if err != nil || len(tools) != 1 {
			b.Fatalf("loading: %v", err)
		}
		return tools[0]
	}
	ws, err := basisws.Open(context.Background(), &basisws.Options{Root: root, ConfigDir: filepath.Join(root, "config"), Environ: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	plain, confined := load(nil), load(ws.Sandbox())
	call := contract.Call{ID: "bench", Input: json.RawMessage(`{"n": 1}`)}
	ctx := context.Background()
	var plainTime, confinedTime time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := plain.Execute(ctx, call); err != nil {
			b.Fatal(err)
		}
		plainTime += time.Since(start)
		start = time.Now()
		if _, err := confined.Execute(ctx, call); err != nil {
			b.Fatal(err)
		}
		confinedTime += time.Since(start)
	}
	b.ReportMetric(float64(plainTime.Nanoseconds())/float64(b.N), "plain-ns/call")
	b.ReportMetric(float64(confinedTime.Nanoseconds())/float64(b.N), "sandboxed-ns/call")
	b.ReportMetric(float64(confinedTime)/float64(plainTime), "ratio")
}
