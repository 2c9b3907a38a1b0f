//go:build linux

package e2e_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchPayload is the small object every module's benchmarks send.
const benchPayload = `{"job":"deploy","params":{"branch":"main","dry_run":true}}`

// catWorkspace is a workspace declaring one tool, cat, that runs /bin/cat.
func catWorkspace(tb testing.TB) string {
	tb.Helper()
	ws := tb.TempDir()
	writeFilesTB(tb, ws, map[string]string{".basis/tools.json": `{"schema": 1, "tools": {"cat": {
		"description": "Echo the input.",
		"input_schema": {"type": "object", "required": ["job"], "properties": {
		  "job": {"type": "string", "minLength": 1},
		  "params": {"type": "object", "properties": {"branch": {"type": "string"}, "dry_run": {"type": "boolean"}}}
		}},
		"command": ["/bin/cat"]
	}}}`})
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
func directCat(b *testing.B) {
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = strings.NewReader(benchPayload)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || out.String() != benchPayload {
		b.Fatalf("cat: %q, %v", out.String(), err)
	}
}

// BenchmarkBasisCallOverDirect alternates, call by call, a whole `basis
// call` of a declared /bin/cat tool with running /bin/cat directly, and
// reports the median of each and their ratio: what a host that shells out
// to basis pays per call.
func BenchmarkBasisCallOverDirect(b *testing.B) {
	ws, cfg := catWorkspace(b), b.TempDir()
	var ours, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		basisCall(b, ws, cfg)
		t1 := time.Now()
		directCat(b)
		ours = append(ours, t1.Sub(t0))
		direct = append(direct, time.Since(t1))
	}
	mo, md := median(ours), median(direct)
	b.ReportMetric(float64(mo.Microseconds()), "basis-µs/op")
	b.ReportMetric(float64(md.Microseconds()), "direct-µs/op")
	b.ReportMetric(float64(mo)/float64(md), "ratio")
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
	ws, cfg := catWorkspace(b), b.TempDir()
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
