// Package e2e holds the end-to-end tests of basis: the basis command
// against real third-party MCP software (the pinned Node peers in peers/),
// the nomcp build, a memory bound, soak tests, and the benchmark of a whole
// `basis call` against running the program directly.
//
// The package itself exports the few process-table readers those tests
// share (Linux /proc): which processes carry a marker in their environment,
// a process's children, its open descriptors, resident and peak memory. A
// test marks every process it expects basis to start with an environment
// variable of its own, then asks the process table, after basis exited,
// whether any of them is still there.
//
// How to run each part is in README.md: `make e2e` (peers), `make bench`
// (one table of every ratio, written to BENCHMARKS.md), `make fuzz` and
// `make soak`.
package e2e
