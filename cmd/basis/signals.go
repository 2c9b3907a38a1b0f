//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals end a run: Ctrl-C, kill's default, a closed terminal or a
// dropped SSH session, and Ctrl-\. Each cancels the call in progress —
// the runtime stops the tool's whole process group and writes the audit
// record — and basis exits with 128 plus the signal's number.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalError is the cause of a context cancelled by one of stopSignals.
type signalError struct{ Signal syscall.Signal }

// Error names the signal.
func (e *signalError) Error() string {
	return fmt.Sprintf("basis received %s", signalName(e.Signal))
}

// signalContext returns a context cancelled, with a *signalError as its
// cause, by the first of stopSignals. A second signal exits at once with
// the same status, for a tool that will not stop. received reports the
// first signal, zero when none came; stop unregisters the handler.
func signalContext(parent context.Context) (ctx context.Context, received func() syscall.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, stopSignals...)
	var first atomic.Int32
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				sig := s.(syscall.Signal)
				if !first.CompareAndSwap(0, int32(sig)) {
					os.Exit(exitStatusFor(syscall.Signal(first.Load())))
				}
				cancel(&signalError{Signal: sig})
			case <-done:
				return
			}
		}
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(first.Load()) }, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// exitStatusFor is the shell's convention for a process ended by a signal.
func exitStatusFor(sig syscall.Signal) int { return 128 + int(sig) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return fmt.Sprintf("signal %d", int(sig))
}
