//go:build !nomcp

package main

import (
	"runtime/debug"
	"testing"
)

// TestServeGC: basis serve collects less often unless the operator chose
// with $GOGC.
func TestServeGC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    int
	}{
		{"no GOGC", []string{"HOME=/h"}, 400},
		{"the operator's GOGC", []string{"GOGC=50"}, 123},
		{"an empty GOGC is set too", []string{"GOGC="}, 123},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := debug.SetGCPercent(123)
			defer debug.SetGCPercent(old)
			serveGC(tc.environ)
			if got := debug.SetGCPercent(123); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
