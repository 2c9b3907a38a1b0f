//go:build unix

// Package terminal asks the person at a terminal whether a call may run:
// the approver `basis call` uses when a person is there.
//
// It is a module of its own so that a host which never asks at a terminal
// does not take golang.org/x/term (and the raw-mode handling it brings)
// into its module graph. What the question says and what each key means
// live in the approver module ([approver.TerminalQuestion],
// [approver.TerminalAnswer]), shared by every approver that asks a person;
// this package only opens the terminal, switches it to raw mode, discards
// keys typed ahead, reads one key and restores the terminal.
package terminal
