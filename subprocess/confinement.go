//go:build unix

package subprocess

import (
	"encoding/json"
	"os/exec"
)

// Confinement is what a sandbox makes of one tool's programs, in terms
// this package and the tool packages share, so that declared and spawn
// can confine their programs without importing the sandbox (and its
// dependencies) themselves. A host builds one per call through a hook
// such as declared.Options.Sandbox ([Confiner]).
type Confinement struct {
	// Confine becomes the program's [Cmd.Confine]: it readies the command
	// to run confined and returns how to start it.
	Confine func(cmd *exec.Cmd) (start func() error, release func(), err error)
	// Subject describes the confinement as a JSON object; a tool puts it
	// in its preview's subject under "sandbox", so an approver sees it, a
	// rule can match it and the audit records it. It must be the same for
	// the same call.
	Subject json.RawMessage
	// Summary is the confinement in one human line, appended to the
	// preview's summary.
	Summary string
	// Profile is the confinement as an approval of the tool records it
	// (a tool's definition, under "sandbox"): a JSON object like Subject,
	// without what every call gets wherever it runs (the workspace, the
	// working directory, the per-call temporary directory), so that an
	// approval holds in every workspace with the same confinement. Empty
	// means Subject.
	Profile json.RawMessage
	// ReadOnly reports that the kernel holds the program read-only: no
	// writes outside its per-call temporary directory, no network, reads
	// limited to the workspace, system directories and its own program.
	// Only a confinement that enforces all of it says so; a tool that
	// asked for it (a manifest's "sandbox": "read-only") may then call its
	// calls side effect none. False wherever the sandbox is off.
	ReadOnly bool
	// Refusal is the one line a binding adds to the result of a program
	// that failed: which sandbox ran it and which setting would allow what
	// it may have been refused (writes, the network). Empty: nothing to
	// add (no sandbox).
	Refusal string
	// Refused, when set, is the line a binding adds instead of Refusal,
	// asked once its program failed and Run returned: it names what the
	// kernel reported it refused the program (a sandbox that reads
	// Landlock's audit records, where the operator turned audit on), or
	// is Refusal where it reported nothing. A Confinement that has it is
	// for one run.
	Refused func() string
}

// A Confiner is how a host confines the programs of its tools, the one hook
// type every binding takes (declared tools, spawn, stdio MCP servers): it
// returns the confinement of the program tool is about to start in dir.
// tool is the tool's name (a stdio MCP server's program goes by
// "mcp__<server>"); network is whether the tool declared it needs the
// network. An error refuses the start: a binding never runs a program
// unconfined because its confinement could not be had.
type Confiner func(tool string, network bool, dir string) (*Confinement, error)
