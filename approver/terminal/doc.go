//go:build unix

// Package terminal asks the person at a terminal whether a call may run:
// the approver `basis call` uses when a person is there.
//
// It is a module of its own so that a host which never asks at a terminal
// does not take golang.org/x/term (and the raw-mode handling it brings)
// into its module graph. It opens the terminal, switches it to raw mode,
// discards keys typed ahead, asks, reads one key and restores the
// terminal.
package terminal
