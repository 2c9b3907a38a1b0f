//go:build linux

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// benchPayload is the small object every module's benchmarks send.
const benchPayload = `{"job":"deploy","params":{"branch":"main","dry_run":true}}`

// catWorkspace is a workspace declaring one tool, cat, that runs /bin/cat.
// catRuntime is the runtime a host would build on the workspace: its
// declared tools, every call allowed, the audit written and discarded.
func catRuntime(tb testing.TB, ws string) *runtime.Runtime {
	tb.Helper()
	tools, err := declared.Load(tb.Context(), ws, nil)
	if err != nil {
		tb.Fatal(err)
	}
	b := runtime.NewBuilder()
	if err := b.Add(runtime.Tools(tools)...); err != nil {
		tb.Fatal(err)
	}
	gate, err := approver.NewGate(approver.AllowAll(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := b.Build(&runtime.Options{Gate: gate, Audit: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

// catWorkspaceDir is the cat workspace, checked in.
const catWorkspaceDir = "testdata/catworkspace"

// settledCatWorkspace is the checked-in cat workspace itself, which the
// benchmarks only read. Its directories were made when the repository was
// checked out, so their change time is settled: the sandbox remembers a
// directory's listing and a git config's entries only once their change
// time is two seconds old (a filesystem's clock is coarse), as a
// workspace's usually is. A workspace made for the benchmark would be
// read afresh at every call of a one-second run.
func settledCatWorkspace(b *testing.B) string {
	ws, err := filepath.Abs(catWorkspaceDir)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}

// catWorkspace is a copy of the cat workspace of the test's own.
func catWorkspace(tb testing.TB) string {
	tb.Helper()
	manifest, err := os.ReadFile(filepath.Join(catWorkspaceDir, ".basis", "tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	ws := tb.TempDir()
	writeFilesTB(tb, ws, map[string]string{".basis/tools.json": string(manifest)})
	return ws
}

// basisCall runs one `basis call cat` end to end: a new basis process
// finds the workspace, loads the manifest, checks the input, asks the
// gate, runs /bin/cat and prints its output.
func basisCall(b *testing.B, ws, cfg string) {
	cmd := exec.Command(basisBinary, "-C", ws, "call", "cat", benchPayload, "--approve", "allow")
	cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != benchPayload {
		b.Fatalf("basis call: %q, %v", out, err)
	}
}

// directCat is the baseline: the program the tool declares, run directly
// with the same input.
func directCat(b *testing.B) { runCat(b, "/bin/cat") }

// runCat runs path, a program that copies its stdin to its stdout, with
// the call's input.
func runCat(b *testing.B, path string) {
	cmd := exec.Command(path)
	cmd.Stdin = strings.NewReader(benchPayload)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || out.String() != benchPayload {
		b.Fatalf("%s: %q, %v", path, out.String(), err)
	}
}

// BenchmarkBasisCallOverDirect alternates, call by call, a whole `basis
// call` of a declared /bin/cat tool with running /bin/cat directly, and
// reports the median of each and their ratio: what a host that shells out
// to basis pays per call. It alternates a third run too, the floor (see
// internal/initcost/floor: a Go program that links jsonschema/v6 and runs
// /bin/cat, nothing else), and reports it over /bin/cat ("floor-ratio")
// and basis over it ("over-floor"): what any Go program that checks
// inputs with that library pays, and what basis adds to that.
func BenchmarkBasisCallOverDirect(b *testing.B) {
	ws, cfg := settledCatWorkspace(b), b.TempDir()
	floor := filepath.Join(b.TempDir(), "floor")
	if err := goBuild(".", floor, "./internal/initcost/floor"); err != nil {
		b.Fatal(err)
	}
	var ours, floors, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		basisCall(b, ws, cfg)
		t1 := time.Now()
		runCat(b, floor)
		t2 := time.Now()
		runCat(b, "/bin/cat")
		ours = append(ours, t1.Sub(t0))
		floors = append(floors, t2.Sub(t1))
		direct = append(direct, time.Since(t2))
	}
	mo, mf, md := median(ours), median(floors), median(direct)
	b.ReportMetric(float64(mo.Microseconds()), "basis-µs/op")
	b.ReportMetric(float64(mf.Microseconds()), "floor-µs/op")
	b.ReportMetric(float64(md.Microseconds()), "direct-µs/op")
	b.ReportMetric(float64(mo)/float64(md), "ratio")
	b.ReportMetric(float64(mf)/float64(md), "floor-ratio")
	b.ReportMetric(float64(mo)/float64(mf), "over-floor")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkBasisCallBreakdown says where a `basis call`'s time goes, at the
// level of whole processes, alternating four runs call by call: `basis
// version` (the process starting and exiting: Go's runtime, the prctl, the
// signal handlers), `basis tools` (that plus finding the workspace and
// loading its manifest and every schema), `basis call` (that plus the
// input check, the gate, running /bin/cat and printing), and /bin/cat run
// directly. Each median is reported; the differences are the stages' cost.
func BenchmarkBasisCallBreakdown(b *testing.B) {
	ws, cfg := settledCatWorkspace(b), b.TempDir()
	runOK := func(args ...string) {
		cmd := exec.Command(basisBinary, args...)
		cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("basis %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var version, tools, call, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		runOK("version")
		t1 := time.Now()
		runOK("-C", ws, "tools")
		t2 := time.Now()
		basisCall(b, ws, cfg)
		t3 := time.Now()
		directCat(b)
		version, tools, call = append(version, t1.Sub(t0)), append(tools, t2.Sub(t1)), append(call, t3.Sub(t2))
		direct = append(direct, time.Since(t3))
	}
	b.ReportMetric(float64(median(version).Microseconds()), "version-µs/op")
	b.ReportMetric(float64(median(tools).Microseconds()), "tools-µs/op")
	b.ReportMetric(float64(median(call).Microseconds()), "call-µs/op")
	b.ReportMetric(float64(median(direct).Microseconds()), "direct-µs/op")
}

// BenchmarkServeStdioOverRuntime alternates, call by call, a tools/call
// from a go-sdk client to a `basis serve` process over stdio with the same
// declared /bin/cat call through the runtime in this process, and reports
// the median of each and their ratio ("ratio"): what serving over MCP adds
// to a call, protocol, pipes and a second process included.
func BenchmarkServeStdioOverRuntime(b *testing.B) {
	if !serveAvailable(b) {
		b.Skip("the basis built here has no serve command (a -tags nomcp build?)")
	}
	ws := settledCatWorkspace(b)
	session, _ := connectServe(b, ws, "--approve", "allow")
	rt := catRuntime(b, ws)
	var args map[string]any
	if err := json.Unmarshal([]byte(benchPayload), &args); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var served, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cat", Arguments: args})
		if err != nil || res.IsError || toolText(res) != benchPayload {
			b.Fatalf("tools/call through basis serve: %v %v", err, res)
		}
		t1 := time.Now()
		out := rt.Call(ctx, "cat", contract.Call{ID: "bench", Input: json.RawMessage(benchPayload)})
		if out.Status != runtime.StatusOK || out.Text != benchPayload {
			b.Fatalf("runtime call: %v %q", out.Status, out.Text)
		}
		served = append(served, t1.Sub(t0))
		direct = append(direct, time.Since(t1))
	}
	ms, md := median(served), median(direct)
	b.ReportMetric(float64(ms.Microseconds()), "served-µs/op")
	b.ReportMetric(float64(md.Microseconds()), "runtime-µs/op")
	b.ReportMetric(float64(ms)/float64(md), "ratio")
}

// BenchmarkServeStdioOverSDK alternates, call by call, a tools/call to a
// `basis serve` process over stdio (declared /bin/cat) with the same call
// to cmd/catserver, a bare go-sdk stdio server whose one tool execs
// /bin/cat, and reports the median of each and their ratio ("ratio"; issue
// 25's target is ≤ 1.10): what basis adds to serving a program over MCP.
func BenchmarkServeStdioOverSDK(b *testing.B) {
	if !serveAvailable(b) {
		b.Skip("the basis built here has no serve command (a -tags nomcp build?)")
	}
	catOnce.Do(func() {
		catBin = filepath.Join(binDir, "catserver")
		wd, err := os.Getwd()
		if err != nil {
			catErr = err
			return
		}
		catErr = goBuild(wd, catBin, "./cmd/catserver")
	})
	if catErr != nil {
		b.Fatal(catErr)
	}
	// The bare server runs /bin/cat unconfined; basis confines it unless
	// the operator's sandbox.json turns the sandbox off. "sandboxed" is
	// what basis costs as it ships, "nosandbox" what basis itself adds to
	// the same unconfined start, and "sandboxed-both" what basis adds to a
	// start the sandbox module confines in both servers: the first is the
	// other two's product.
	ws := settledCatWorkspace(b)
	for _, tc := range []struct {
		name, operator string
		bare           []string
	}{
		{"sandboxed", "", nil},
		{"nosandbox", `{"schema": 1, "mode": "off"}`, nil},
		{"sandboxed-both", "", []string{"-sandbox", ws}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := b.TempDir()
			if tc.operator != "" {
				writeFilesTB(b, cfg, map[string]string{"sandbox.json": tc.operator})
			}
			served, _ := connectServeConfig(b, ws, cfg, "--approve", "allow")
			serveOverSDK(b, served, tc.bare...)
		})
	}
}

// serveOverSDK alternates a call to basis serve with the same call to
// catserver, started with bareArgs, and reports each median and their ratio.
func serveOverSDK(b *testing.B, served *mcp.ClientSession, bareArgs ...string) {
	client := mcp.NewClient(&mcp.Implementation{Name: "basis-e2e", Version: "v0"}, nil)
	bare, err := client.Connect(b.Context(), &mcp.CommandTransport{Command: exec.Command(catBin, bareArgs...)}, nil)
	if err != nil {
		b.Fatalf("connecting to catserver: %v", err)
	}
	b.Cleanup(func() { bare.Close() })
	var args map[string]any
	if err := json.Unmarshal([]byte(benchPayload), &args); err != nil {
		b.Fatal(err)
	}
	call := func(s *mcp.ClientSession, want string) time.Duration {
		began := time.Now()
		res, err := s.CallTool(b.Context(), &mcp.CallToolParams{Name: "cat", Arguments: args})
		d := time.Since(began)
		if err != nil || res.IsError || toolText(res) != want {
			b.Fatalf("tools/call: %v %v", err, res)
		}
		return d
	}
	var basis, sdk []time.Duration
	for b.Loop() {
		basis = append(basis, call(served, benchPayload))
		sdk = append(sdk, call(bare, benchPayload))
	}
	mb, ms := median(basis), median(sdk)
	b.ReportMetric(float64(mb.Microseconds()), "served-µs/op")
	b.ReportMetric(float64(ms.Microseconds()), "sdk-µs/op")
	b.ReportMetric(float64(mb)/float64(ms), "ratio")
}

var (
	catOnce sync.Once
	catBin  string
	catErr  error
)
