//go:build unix && !linux

package mcpbind_test

// cpuMeter: only Linux's /proc tells what a live child has used.
func cpuMeter() func() (cpuUse, bool) {
	return func() (cpuUse, bool) { return cpuUse{}, false }
}
