//go:build unix

package workspace

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// TestStopContext: a signal cancels the context, naming itself as the
// cause, and stop reports it; with none, stop reports none and cancels.
func TestStopContext(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sig       syscall.Signal
		wantCause string
	}{
		{"SIGHUP", syscall.SIGHUP, "basis received SIGHUP"},
		{"no signal", 0, context.Canceled.Error()},
	} {
		ctx, stop := StopContext(t.Context())
		if tc.sig != 0 {
			if err := syscall.Kill(syscall.Getpid(), tc.sig); err != nil {
				t.Fatal(err)
			}
			<-ctx.Done() // bounded by the test's timeout
		}
		if got := stop(); got != tc.sig {
			t.Errorf("%s: stop reported %v, want %v", tc.name, got, tc.sig)
		}
		if cause := context.Cause(ctx); cause == nil || cause.Error() != tc.wantCause {
			t.Errorf("%s: cause %v, want %q", tc.name, cause, tc.wantCause)
		}
		if tc.sig == 0 && !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("%s: not cancelled by stop: %v", tc.name, ctx.Err())
		}
	}
}
