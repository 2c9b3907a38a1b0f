//go:build unix

// Package terminal asks the person at a terminal whether a call may run:
// the approver `basis call` uses when a person is there. It also asks the
// questions an MCP server puts to its client (elicitation) in a form of
// primitive fields or as a page to open ([Terminal.AskForm],
// [Terminal.AskURL]), and fills a form with its defaults when nobody is
// there ([FormDefaults]); it takes the server's schema as JSON, so it does
// not depend on an MCP SDK.
//
// It is a module of its own so that a host which never asks at a terminal
// does not take golang.org/x/term (and the raw-mode handling it brings)
// into its module graph. It opens the terminal, switches it to raw mode,
// discards keys typed ahead, asks, reads one key and restores the
// terminal.
package terminal
