package gctarget_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/basis-go/basis/cmd/basis/internal/gctarget"
)

// TestRaise: the target is raised unless the operator set $GOGC, even to
// nothing.
func TestRaise(t *testing.T) {
	for _, tc := range []struct {
		name string
		gogc *string
		want int
	}{
		{"no GOGC", nil, gctarget.Percent},
		{"the operator's GOGC", ptr("50"), 123},
		{"an empty GOGC is set too", ptr(""), 123},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", "restored after the test")
			if tc.gogc == nil {
				os.Unsetenv("GOGC")
			} else {
				os.Setenv("GOGC", *tc.gogc)
			}
			old := debug.SetGCPercent(123)
			defer debug.SetGCPercent(old)
			gctarget.Raise()
			if got := debug.SetGCPercent(123); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
