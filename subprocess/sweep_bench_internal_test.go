//go:build linux

package subprocess

import "testing"

// BenchmarkSweep is one sweep that finds nothing to kill: what every run
// pays once ReapOrphans is on.
func BenchmarkSweep(b *testing.B) {
	if !reaping.Load() {
		b.Skip("ReapOrphans is off")
	}
	for b.Loop() {
		sweep()
	}
}
