// Command basis is the tool runtime for LLM agents, on the command line: it
// lists the tools a workspace provides, validates their configuration,
// runs one call through the whole pipeline (schema, preview, approval,
// execution, audit), and manages the operator's approval rules.
//
// Run "basis help" for the commands, or see the repository README.
package main

import (
	"context"
	"fmt"
	"os"

	// Imported for its init, which must run before the heavy packages'
	// (see the package's doc).
	_ "github.com/basis-go/basis/cmd/basis/internal/gctarget"
	"github.com/basis-go/basis/subprocess"
	basisws "github.com/basis-go/basis/workspace"
	"golang.org/x/term"
)

func main() {
	// The very first thing: when this process is the sandbox's
	// re-execution of basis, Main confines itself and executes the
	// program it was asked to run, and never returns.
	// Then, before any program starts: what a program leaves behind
	// comes to basis, and no process of ours may read our memory or
	// environment through /proc.
	if err := basisws.Main(); err != nil {
		fmt.Fprintf(os.Stderr, "basis: %v\n", err)
		os.Exit(exitUsage)
	}
	// Ctrl-C and the like cancel the call in progress; a second signal
	// ends basis at once.
	ctx, stop := basisws.StopContext(context.Background())
	code := run(ctx, os.Args[1:], &env{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		environ: os.Environ(),
		getwd:   os.Getwd,
		interactive: func() bool {
			return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd()))
		},
		progressWidth: func() int {
			if !term.IsTerminal(int(os.Stderr.Fd())) {
				return 0
			}
			w, _, err := term.GetSize(int(os.Stderr.Fd()))
			if err != nil || w <= 0 {
				return 80
			}
			return w
		},
	})
	if sig := stop(); sig != 0 {
		fmt.Fprintf(os.Stderr, "basis: stopped by %s\n", signalName(sig))
		code = 128 + int(sig) // the shell's convention
	}
	os.Exit(code)
}

// signalName is the name basis says it was stopped by.
var signalName = subprocess.SignalName
