package gctarget

import (
	"os"
	"runtime/debug"
)

// Percent is the collector's target (GOGC) basis runs with when $GOGC is
// not set.
const Percent = 400

func init() { Raise() }

// Raise sets the collector's target to [Percent] unless $GOGC is set
// (empty included: the operator wrote it, and the runtime read it).
func Raise() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Percent)
	}
}
