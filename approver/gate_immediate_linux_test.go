package approver_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/basis-go/basis/approver"
)

// notImmediate has the Immediate method but says no.
type notImmediate struct{ approver.ApproverFunc }

func (notImmediate) Immediate() bool { return false }

// The gate asks an approver that answers at once on the call's own thread,
// and any other on a goroutine of its own: the test's goroutine is locked
// to its thread, which no other goroutine can then run on.
func TestGateAsksAnImmediateApproverOnTheCallsThread(t *testing.T) {
	for _, tc := range []struct {
		name         string
		wrap         func(approver.ApproverFunc) approver.Approver
		onCallThread bool
	}{
		{"ImmediateFunc", func(f approver.ApproverFunc) approver.Approver { return approver.ImmediateFunc(f) }, true},
		{"ApproverFunc", func(f approver.ApproverFunc) approver.Approver { return f }, false},
		{"an Immediate method that says no", func(f approver.ApproverFunc) approver.Approver { return notImmediate{f} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			asked := make(chan int, 1)
			g, err := approver.NewGate(tc.wrap(func(context.Context, approver.Request) (approver.Answer, error) {
				asked <- syscall.Gettid()
				return approver.Answer{Decision: approver.Allow}, nil
			}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if v := authorize(t, g, "spawn", cargoTest); !v.Allow {
				t.Fatalf("verdict %+v, want allowed", v)
			}
			if same := <-asked == syscall.Gettid(); same != tc.onCallThread {
				t.Errorf("asked on the call's thread: %v, want %v", same, tc.onCallThread)
			}
		})
	}
}

// An approver that says it answers at once but does not is waited for, on
// the call's goroutine, and its late answer is still not taken.
func TestGateTakesNoLateAnswerFromAnImmediateApprover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := approver.ImmediateFunc(func(ctx context.Context, _ approver.Request) (approver.Answer, error) {
			<-ctx.Done() // answers only once the gate's timeout has passed
			return approver.Answer{Decision: approver.Allow}, nil
		})
		g, err := approver.NewGate(late, &approver.GateOptions{Timeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if v := authorize(t, g, "spawn", cargoTest); v.Allow || v.Source != approver.SourceFailClosed {
			t.Errorf("verdict = %+v, want a denial: the answer came after the timeout", v)
		}
	})
}

// The approvers basis builds in answer at once; a side-effect policy does
// when whatever it asks does.
func TestWhichApproversAreImmediate(t *testing.T) {
	blocking := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		return approver.Answer{}, nil
	})
	for _, tc := range []struct {
		name string
		a    approver.Approver
		want bool
	}{
		{"AllowAll", approver.AllowAll(), true},
		{"DenyAll", approver.DenyAll(), true},
		{"BySideEffect asking AllowAll", approver.BySideEffect(approver.SideEffectPolicy{Otherwise: approver.AllowAll()}), true},
		{"BySideEffect asking a function", approver.BySideEffect(approver.SideEffectPolicy{Otherwise: blocking}), false},
		{"LocalEditsNoNetwork asking nobody", approver.LocalEditsNoNetwork(nil), true},
		{"nil", nil, false},
	} {
		if got := approver.IsImmediate(tc.a); got != tc.want {
			t.Errorf("%s: IsImmediate = %v, want %v", tc.name, got, tc.want)
		}
	}
}
