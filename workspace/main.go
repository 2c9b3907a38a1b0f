//go:build unix

package workspace

import (
	"errors"
	"fmt"

	"github.com/basis-go/basis/sandbox"
	"github.com/basis-go/basis/subprocess"
)

// Main readies the process the way basis's own main does, and a host
// calls it first thing in main, before any other goroutine starts a
// program or reads a credential:
//
//   - when this process is the sandbox's re-execution of the host (how a
//     program is confined where the host cannot confine it from a thread
//     of its own: an unprivileged user, an MCP server's command), it
//     confines itself and executes the program, and never returns
//     (sandbox.Main): without it, such a program would run the host's main
//     instead;
//   - what a program leaves behind comes to this process and dies when its
//     call ends (subprocess.ReapOrphans);
//   - no process of the host's user may read its memory or environment
//     through /proc (prctl PR_SET_DUMPABLE 0): a command it starts could
//     otherwise read every credential the host holds.
//
// An error means the process cannot be made safe, and the host should not
// run any tool.
func Main() error {
	sandbox.Main()
	if err := subprocess.ReapOrphans(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("cannot make sure no process a call starts outlives it (%v); refusing to run", err)
	}
	if err := forbidInspection(); err != nil {
		return fmt.Errorf("cannot protect its environment from the commands it starts (prctl: %v); refusing to run", err)
	}
	return nil
}
