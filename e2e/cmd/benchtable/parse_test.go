package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want result
		ok   bool
	}{
		{
			"BenchmarkRunOverBareExec-2   \t     890\t   2858956 ns/op\t      1338 bare-µs/op\t         6.072 overhead-%\t      1419 run-µs/op",
			result{name: "BenchmarkRunOverBareExec", iterations: 890, metrics: map[string]float64{"ns/op": 2858956, "bare-µs/op": 1338, "overhead-%": 6.072, "run-µs/op": 1419}},
			true,
		},
		{
			"BenchmarkGate/rules=10000-2    \t  129970\t     18091 ns/op\t     13675 median-ns",
			result{name: "BenchmarkGate/rules=10000", iterations: 129970, metrics: map[string]float64{"ns/op": 18091, "median-ns": 13675}},
			true,
		},
		{
			// GOMAXPROCS=1: no suffix; a sub-benchmark's own dash stays.
			"BenchmarkStartup/servers-8 100 5 ns/op 1.21 ratio",
			result{name: "BenchmarkStartup/servers", iterations: 100, metrics: map[string]float64{"ns/op": 5, "ratio": 1.21}},
			true,
		},
		{
			"BenchmarkStartup/warm-up 100 5 ns/op",
			result{name: "BenchmarkStartup/warm-up", iterations: 100, metrics: map[string]float64{"ns/op": 5}},
			true,
		},
		{"BenchmarkX-2 \t --- FAIL: BenchmarkX", result{}, false},
		{"goos: linux", result{}, false},
		{"PASS", result{}, false},
		{"ok  \tgithub.com/basis-go/basis/subprocess\t3.2s", result{}, false},
		{"BenchmarkX-2 0 12 ns/op", result{}, false},      // no iterations
		{"BenchmarkX-2 10 12 ns/op 3", result{}, false},   // a value without a unit
		{"BenchmarkX-2 10 twelve ns/op", result{}, false}, // not a number
		{"    benchmarks_test.go:12: BenchmarkX 1 2 3", result{}, false},
	}
	for _, tt := range tests {
		got, ok := parseLine(tt.line)
		if ok != tt.ok {
			t.Errorf("parseLine(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(result{})); ok && diff != "" {
			t.Errorf("parseLine(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]float64
		want    float64
		ok      bool
	}{
		{"ratio", map[string]float64{"ratio": 1.26, "overhead-%": 99}, 1.26, true},
		{"named ratio", map[string]float64{"ratio-100k/100": 1.002}, 1.002, true},
		{"ratio named last", map[string]float64{"concurrent-ratio": 1.21, "ns/op": 5}, 1.21, true},
		{"overhead", map[string]float64{"overhead-%": 16.65}, 1.1665, true},
		{"negative overhead", map[string]float64{"overhead-%": -4}, 0.96, true},
		{"none", map[string]float64{"ns/op": 100, "median-ns": 13000}, 0, false},
	}
	for _, tt := range tests {
		got, ok := result{metrics: tt.metrics}.ratio()
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: ratio() = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFigureReadsTheRowsMetric(t *testing.T) {
	gate := row{kind: absoluteKind, metric: "median-ns", scale: 1e-3}
	res, _ := parseLine("BenchmarkGate/rules=10000-2 129970 18091 ns/op 13675 median-ns")
	if v, ok := figure(gate, res); !ok || math.Abs(v-13.675) > 1e-9 {
		t.Errorf("figure = %v, %v; want 13.675 µs", v, ok)
	}
	if _, ok := figure(row{kind: ratioKind}, res); ok {
		t.Error("a line without a ratio gave a ratio figure")
	}
	// A row may name which of several ratios it reads.
	serve, _ := parseLine("BenchmarkServeCall/bin-cat-2 500 2000 ns/op 1.12 served/direct 1.03 served/bare-sdk")
	if v, ok := figure(row{kind: ratioKind, metric: "served/direct"}, serve); !ok || v != 1.12 {
		t.Errorf("figure = %v, %v; want served/direct 1.12", v, ok)
	}
}

// Every row's expressions compile, and every row has a target and says
// who set it: the table never shows a figure without its bar.
func TestRowsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.name == "" || r.module == "" || r.bench == "" || r.match == "" || r.baseline == "" || r.source == "" || r.target <= 0 {
			t.Errorf("row %+v is missing a field", r)
		}
		if r.kind == absoluteKind && (r.metric == "" || r.unit == "" || r.scale == 0) {
			t.Errorf("row %q reads an absolute figure but names no metric, unit or scale", r.name)
		}
		if seen[r.name] {
			t.Errorf("two rows are named %q", r.name)
		}
		seen[r.name] = true
		for _, part := range strings.Split(r.bench, "/") {
			if _, err := regexp.Compile(part); err != nil {
				t.Errorf("row %q: -bench part %q: %v", r.name, part, err)
			}
		}
		if _, err := regexp.Compile(r.match); err != nil {
			t.Errorf("row %q: match: %v", r.name, err)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, seed := range []string{
		"BenchmarkRunOverBareExec-2   \t     890\t   2858956 ns/op\t      1338 bare-µs/op\t         6.072 overhead-%",
		"BenchmarkGate/rules=10000-2 129970 18091 ns/op 13675 median-ns",
		"BenchmarkX 1 NaN ratio", "Benchmark- 1 1 a", "ok x 1s", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		res, ok := parseLine(text)
		if !ok {
			return
		}
		if !strings.HasPrefix(res.name, "Benchmark") || res.iterations <= 0 || len(res.metrics) == 0 {
			t.Fatalf("parseLine(%q) = %+v: a result needs a name, iterations and a metric", text, res)
		}
		if strings.ContainsAny(res.name, " \t\n") {
			t.Fatalf("name %q holds white space", res.name)
		}
		if want, ok := res.metrics["ratio"]; ok {
			if got, _ := res.ratio(); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("ratio() = %v, but the line reports ratio %v", got, want)
			}
		}
	})
}

func TestSkipReason(t *testing.T) {
	tests := map[string]string{
		"cpu: AMD EPYC\nBenchmarkServeStdioOverRuntime\n    bench_test.go:135: this basis has no serve command yet\n--- SKIP: BenchmarkServeStdioOverRuntime\nPASS\n": "this basis has no serve command yet",
		"BenchmarkX\n--- SKIP: BenchmarkX\n": "BenchmarkX",
		"BenchmarkX-2 10 5 ns/op\nPASS\n":    "",
	}
	for output, want := range tests {
		if got := skipReason(output); got != want {
			t.Errorf("skipReason(%q) = %q, want %q", output, got, want)
		}
	}
}

// Two rows reading different figures of one benchmark read them from the
// same runs: the benchmark runs once, and each row gets its own metric.
func TestRowsOfOneBenchmarkShareItsRuns(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "m", "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := "BenchmarkG/a-2 \t 10 \t 100 ns/op \t 2.0 ratio \t 1.2 hops-ratio\n" +
		"BenchmarkG/a-2 \t 10 \t 100 ns/op \t 2.2 ratio \t 1.3 hops-ratio\n"
	runs := 0
	goTest := onceEach(func(dir, bench string) (string, error) {
		runs++
		return out, nil
	})
	base := row{module: "m", bench: "^BenchmarkG$/^a$", match: "^BenchmarkG/a$", kind: ratioKind, target: 1.5}
	total, hops := base, base
	total.metric, hops.metric = "ratio", "hops-ratio"
	var got [][]float64
	for _, r := range []row{total, hops} {
		got = append(got, measure(r, root, goTest).figures)
	}
	if runs != 1 {
		t.Errorf("the benchmark ran %d times for two rows; want once", runs)
	}
	if diff := cmp.Diff([][]float64{{2.0, 2.2}, {1.2, 1.3}}, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func TestConformanceSection(t *testing.T) {
	output := "conformance: 2025-11-25, stateful: everything-server directly at 127.0.0.1:1\n" +
		"| server under test | a | b |\n|---|---|---|\n| direct | 1 passed, 0 failed | 2 passed, 0 failed |\n\nall good.\n"
	report := conformanceReport(output)
	if strings.HasPrefix(report, "conformance:") || !strings.HasPrefix(report, "| server under test |") || !strings.HasSuffix(report, "all good.\n") {
		t.Errorf("report = %q, want the output from its table on", report)
	}
	if got := conformanceReport("no table here\n"); got != "" {
		t.Errorf("a run without a table gave %q", got)
	}
	section := string(conformanceSection(report))
	for _, want := range []string{"## MCP conformance", "0.2.0-alpha.11", "`make conformance`", report} {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}
	if conformanceSection("") != nil {
		t.Error("a section was made without a table")
	}
}
