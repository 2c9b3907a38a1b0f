//go:build unix

package workspace

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/basis-go/basis/subprocess"
)

// StopContext returns a context that the first SIGINT, SIGTERM, SIGHUP
// or SIGQUIT cancels — Ctrl-C, kill's default, a closed terminal or a
// dropped SSH session, Ctrl-\ — with an error naming the signal as its
// cause: the runtime then stops the call in progress, its program's
// whole process group, and writes its audit record. A second signal
// exits the process at once with 128 plus its number, the shell's
// convention, for a tool that will not stop. stop unregisters the
// handler and returns the first signal, zero when none came.
func StopContext(parent context.Context) (ctx context.Context, stop func() syscall.Signal) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	var first atomic.Int32
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				sig := s.(syscall.Signal)
				if !first.CompareAndSwap(0, int32(sig)) {
					os.Exit(128 + int(first.Load()))
				}
				cancel(&signalError{sig})
			case <-done:
				return
			}
		}
	}()
	return ctx, func() syscall.Signal {
		signal.Stop(ch)
		close(done)
		cancel(nil)
		return syscall.Signal(first.Load())
	}
}

// signalError is the cause of a context StopContext cancelled.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "basis received " + subprocess.SignalName(e.sig) }
