// Command benchtable runs every ratio benchmark the modules of the
// repository define, each against the baseline it measures in the same
// run, and prints one table: benchmark, baseline, measured value, target,
// and whether the target was met. With -out it also writes the table, the
// machine it ran on and the command, as Markdown (e2e/BENCHMARKS.md).
//
// `make bench` runs it from the repository root:
//
//	cd e2e && go run ./cmd/benchtable -root .. -count 3 -benchtime 1s -out BENCHMARKS.md
//
// The rows are a fixed list (see rows in table.go): each names its module,
// its benchmark, the metric it reads and its target. A benchmark reports
// its ratio as "ratio" or "ratio-…" (ours over baseline), or as
// "overhead-%" (converted to a ratio); a few rows read an absolute figure
// ("median-ns", "cpu-ms/op"). A row whose module or benchmark does not
// exist yet is listed as "not measured", never estimated. Each figure is
// the median over -count runs, with the range.
//
// The exit status is 1 when a benchmark could not run (a build or a
// benchmark failure), and, with -strict, when a measured figure misses its
// target; 0 otherwise.
package main
