//go:build unix && !nomcp

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkServeCall alternates, in one loop, a declared /bin/cat call
// made through basis serve over stdio by a go-sdk client and the same
// call made through the runtime in this process, and reports each one's
// median time per call and the ratio of the medians: what serving costs a
// call, against a baseline measured in the same run. It also reports the
// median of a served call of a tool that does not exist, which is refused
// before anything runs: the MCP round trip alone.
func BenchmarkServeCall(b *testing.B) {
	ws := b.TempDir()
	manifest := `{"schema": 1, "tools": {"cat": {"description": "Echoes its input.", "input_schema": {"type": "object"}, "command": ["/bin/cat"]}}}`
	if err := os.MkdirAll(filepath.Join(ws, ".basis"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".basis", "tools.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}

	// In process: the workspace built as basis call builds it.
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, environ: environ,
		getwd: func() (string, error) { return ws, nil }, interactive: func() bool { return false }}
	w, err := openWorkspace(context.Background(), &globals{dir: ws}, e)
	if err != nil {
		b.Fatal(err)
	}
	gate, errs := w.newGate(context.Background(), approver.AllowAll())
	if errs != nil {
		b.Fatal(errs)
	}
	rt, errs := w.build(context.Background(), &runtime.Options{Gate: gate})
	if errs != nil {
		b.Fatal(errs)
	}

	// Served: the built binary, over stdio.
	r := &serveRig{ws: ws, env: environ}
	s := r.serve(b, nil, "--approve", "allow")

	ctx := context.Background()
	input := map[string]any{"n": 1}
	raw, _ := json.Marshal(input)
	direct := make([]time.Duration, 0, b.N)
	served := make([]time.Duration, 0, b.N)
	roundTrip := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out := rt.Call(ctx, "cat", contract.Call{ID: "bench", Input: raw})
		direct = append(direct, time.Since(start))
		if out.Status != runtime.StatusOK {
			b.Fatalf("direct call %d: %s", i, out.Text)
		}
		start = time.Now()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "cat", Arguments: input})
		served = append(served, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("served call %d: %v %s", i, err, resultText(res))
		}
		start = time.Now()
		res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: input})
		roundTrip = append(roundTrip, time.Since(start))
		if err != nil || !res.IsError {
			b.Fatalf("unknown tool %d: %v", i, err)
		}
	}
	b.StopTimer()
	d, sv := median(direct), median(served)
	b.ReportMetric(float64(d.Nanoseconds()), "direct-ns/call")
	b.ReportMetric(float64(sv.Nanoseconds()), "served-ns/call")
	b.ReportMetric(float64(sv)/float64(d), "ratio")
	b.ReportMetric(float64(median(roundTrip).Nanoseconds()), "roundtrip-ns/call")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
