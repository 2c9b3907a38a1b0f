// Package e2e holds end-to-end tests of basis against real peers, and the
// benchmarks that compare it with a bare baseline.
package e2e
