// Command fuzzall runs every fuzz target of the given modules, each for a
// bounded time, and fails if any of them found something. `make fuzz`
// runs it from e2e/:
//
//	go run ./cmd/fuzzall -root .. -fuzztime 20s -minimizetime 5s MODULE...
//
// For each package of each module it lists the fuzz targets (`go test
// -list '^Fuzz'`) and runs each one alone (`go test -run '^$' -fuzz
// '^NAME$' -fuzztime … -fuzzminimizetime …`), printing go test's output as
// it goes, then a summary: each target passed, found something (go test
// wrote the failing input to the package's testdata/fuzz/NAME/, named in
// the summary), or failed otherwise (a build error, a crash that left no
// input).
//
// One failure is not counted as a finding: go1.26's fuzzing coordinator
// reports "context deadline exceeded" as a failure when its -fuzztime
// deadline fires in the instant before the workers' context is cancelled
// (golang/go#75804, fixed in Go 1.27). That failure writes no input and
// says nothing else; fuzzall recognises exactly that output, with no new
// file in testdata/fuzz, and reports it as the toolchain's race instead.
//
// The exit status is 1 when a target found something or failed, 2 for a
// usage error, 0 otherwise.
package main
