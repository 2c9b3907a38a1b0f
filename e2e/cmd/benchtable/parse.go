package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// result is one benchmark line of go test's output.
type result struct {
	// name is the benchmark's name without the -GOMAXPROCS suffix, such
	// as "BenchmarkGate/rules=10000".
	name string
	// iterations is b.N.
	iterations int64
	// metrics are the reported values by unit: "ns/op", "overhead-%", …
	metrics map[string]float64
}

// parseLine reads one line of `go test -bench` output, such as
//
//	BenchmarkRunOverBareExec-2  890  2858956 ns/op  1338 bare-µs/op  6.072 overhead-%
//
// and reports whether it was a benchmark result.
func parseLine(line string) (result, bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
		return result{}, false
	}
	n, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil || n <= 0 {
		return result{}, false
	}
	r := result{name: trimProcs(fields[0]), iterations: n, metrics: map[string]float64{}}
	for i := 2; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return result{}, false
		}
		r.metrics[fields[i+1]] = v
	}
	return r, true
}

// trimProcs removes the -N suffix go test adds to a benchmark's name when
// GOMAXPROCS is not 1.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// ratio is ours over the baseline, from whichever form the benchmark
// reports: "ratio", a "ratio-…" or "…-ratio" metric, or "overhead-%".
func (r result) ratio() (float64, bool) {
	if v, ok := r.metrics["ratio"]; ok {
		return v, true
	}
	// Sorted, so a line with two named ratios always gives the same one.
	for _, unit := range slices.Sorted(maps.Keys(r.metrics)) {
		if strings.HasPrefix(unit, "ratio-") || strings.HasSuffix(unit, "-ratio") {
			return r.metrics[unit], true
		}
	}
	if v, ok := r.metrics["overhead-%"]; ok {
		return 1 + v/100, true
	}
	return 0, false
}
