//go:build unix

package spawn

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/basis-go/basis/contract"
)

// inputSchema is the tool's input: one required string.
var inputSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"\"!\" and a shell command to run it; any other text is a task for a subagent."}},"required":["input"],"additionalProperties":false}`)

// describe builds the descriptor once, from the configuration.
func (t *Tool) describe() contract.Descriptor {
	var caps []contract.Capability
	if !t.noShell {
		caps = append(caps, contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite)
	}
	if t.delegator != nil {
		caps = append(caps, contract.CapabilityDelegation)
	}
	return contract.Descriptor{
		Name:         contract.SpawnName,
		Description:  t.description(),
		InputSchema:  inputSchema,
		Capabilities: caps,
		SideEffect:   contract.SideEffectProcess,
		Parallel:     false,
		Timeout:      t.timeout + descriptorSlack,
		Binding:      contract.BindingSpawn,
		Source:       "builtin", // as rules name it (approver.BuiltinSource)
	}
}

// description teaches the model the convention: one example of each mode,
// and "!@target" only when there are targets to name.
func (t *Tool) description() string {
	var b strings.Builder
	b.WriteString("Run a shell command, or hand a task to a subagent. The one argument, \"input\", is a string.\n")

	b.WriteString("\nCommand: \"!\" followed by a command, as in {\"input\": \"!go test ./...\"}. ")
	if t.noShell {
		b.WriteString("Commands are switched off here: an input starting with \"!\" is refused.\n")
	} else {
		fmt.Fprintf(&b, "It runs with /bin/sh -c in the workspace root and is stopped after %s. "+
			"Its stdin is empty, so nothing can prompt for input. "+
			"The result is its stdout and stderr (labelled when both have something); a command that fails is an error that still carries its output and exit status. "+
			"Commands see only %s from this environment, plus the variables the runtime sets.\n",
			t.timeout, strings.Join(ambientAllowlist, ", "))
		if len(t.names) > 0 {
			fmt.Fprintf(&b, "\nCommand on a target: \"!@NAME command\" runs the command on the registered target NAME instead of here, as in {\"input\": \"!@%s uname -a\"}. Targets: %s.\n",
				t.names[0], strings.Join(t.names, ", "))
		}
	}

	fmt.Fprintf(&b, "\nTask: any other text, as in {\"input\": %q}. ", exampleTask)
	if t.delegator == nil {
		b.WriteString("There is no subagent here, so tasks are refused.\n")
	} else {
		fmt.Fprintf(&b, "A subagent does the work and its answer is the result. "+
			"A task whose text starts with \"!\" is written with \"!!\": %q delegates %q.\n", exampleEscape, exampleEscape[1:])
	}
	return b.String()
}
