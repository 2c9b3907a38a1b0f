package sandbox

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// Exit codes of a trampoline that could not run the program.
const (
	// ExitNotConfined: the trampoline could not restrict itself; the
	// program did not run. Its stderr says why.
	ExitNotConfined = 125
	// ExitCannotExecute: the program could not be executed (126, as a
	// shell says).
	ExitCannotExecute = 126
	// ExitNotFound: the program does not exist (127, as a shell says).
	ExitNotFound = 127
)

var mainCalled atomic.Bool

// trampolineName is argv[0] of the re-executed binary: the mark the
// trampoline's dispatch and [Main] look for.
const trampolineName = trampoline.Name

// Main must be called first thing in main() by every program that
// confines the programs it starts (the basis command, a host that embeds
// the library, a test binary's TestMain): it enables [Sandbox.Prepare].
// The sandbox's re-execution of that binary never gets this far: the
// initialisation of an internal package of this one, which imports little
// so that Go initialises it early (before the basis binary's JSON Schema
// library, say), restricts it and executes the confined program.
func Main() {
	if len(os.Args) < 2 || os.Args[0] != trampolineName {
		mainCalled.Store(true)
		return
	}
	// Not reached: the trampoline's init executed the program or exited.
	os.Exit(ExitNotConfined)
}

// spec is what the trampoline is told (see trampoline.Spec).
type spec = trampoline.Spec

const specVersion = trampoline.Version

// specRevision is spec.Revision of this build: a digest of the
// trampoline's sources, which the sandbox helper must share.
var specRevision = trampoline.Revision

// confineThread confines the calling thread, which must be locked and
// never unlocked, as sp says (see trampoline.ConfineThread); what this
// machine lacks is an [*UnavailableError].
func confineThread(sp spec) error {
	err := trampoline.ConfineThread(sp)
	var u *trampoline.UnavailableError
	if errors.As(err, &u) {
		return &UnavailableError{Reason: u.Reason}
	}
	return err
}

// holdRules opens, the first time, the paths of the rules every ruleset
// of a program whose reads are limited (or not) has.
func holdRules(limitRead bool) { trampoline.HoldRules(limitRead) }
