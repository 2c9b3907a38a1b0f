//go:build unix

package spawn

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// plan is one call after the parse and the refusals: what would run, and
// where. Preview and Execute both start from it.
type plan struct {
	in       Input
	executor Executor // command mode
	dir      string   // where it runs; "" on a target
	depth    int      // agent mode: the caller's delegation depth
	// confinement is the sandbox of a command that runs here; nil
	// without Options.Sandbox, on a target and for a task.
	confinement *subprocess.Confinement
}

// plan parses the call's input — the one parse — and refuses what cannot
// run.
func (t *Tool) plan(ctx context.Context, call contract.Call) (plan, error) {
	raw, err := decodeArguments(call.Input)
	if err != nil {
		return plan{}, err
	}
	in, err := Parse(raw)
	if err != nil {
		return plan{}, err
	}
	p := plan{in: in, dir: t.root}
	switch in.Mode {
	case ModeCommand:
		if t.noShell {
			return plan{}, t.refuseCommand()
		}
		p.executor = t.local
		if in.Target != "" {
			e, ok := t.targets[in.Target]
			if !ok {
				return plan{}, t.refuseTarget(in.Target)
			}
			p.executor, p.dir = e, ""
		} else if t.sandbox != nil {
			if p.confinement, err = t.confine(p.dir); err != nil {
				return plan{}, err
			}
		}
	case ModeAgent:
		if t.delegator == nil {
			return plan{}, t.refuseTask()
		}
		p.depth = contract.DelegationDepth(ctx)
		if p.depth >= t.maxDepth {
			return plan{}, t.refuseDepth(p.depth)
		}
	}
	return p, nil
}

// confine asks the host's sandbox how a command here is confined. A
// sandbox that fails, or answers with nothing usable, refuses the
// command: it must not run unconfined.
func (t *Tool) confine(dir string) (*subprocess.Confinement, error) {
	c, err := t.sandbox(contract.SpawnName, false, dir)
	if err == nil && (c == nil || c.Confine == nil || !isJSONObject(c.Subject)) {
		err = errors.New("the host's sandbox gave no confinement to run it in")
	}
	if err != nil {
		return nil, &Refusal{reason: errNotConfined, Cause: err,
			Message: "the command cannot run here: " + err.Error()}
	}
	return c, nil
}

// isJSONObject reports whether raw is one valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

func (t *Tool) refuseCommand() error {
	msg := `commands are switched off here, so no input starting with "!" can run`
	if t.delegator != nil {
		msg += fmt.Sprintf("; describe the work as a task for a subagent instead, as in %q", exampleTask)
	} else {
		msg += "; use the other tools"
	}
	return &Refusal{reason: errCommandsOff, Message: msg}
}

func (t *Tool) refuseTarget(name string) error {
	var msg string
	if len(t.names) == 0 {
		msg = fmt.Sprintf("there is no target %q: no targets are registered; run the command here with \"!\" alone, as in %q", name, exampleCommand)
	} else {
		msg = fmt.Sprintf("there is no target %q; the registered targets are %s, or run the command here with \"!\" alone, as in %q",
			name, strings.Join(t.names, ", "), exampleCommand)
	}
	return &Refusal{reason: errUnknownTarget, Message: msg}
}

func (t *Tool) refuseTask() error {
	msg := "there is no subagent here to take a task"
	if t.noShell {
		msg += "; commands are switched off too, so use the other tools"
	} else {
		msg += fmt.Sprintf("; to run a command instead, start the input with \"!\", as in %q", exampleCommand)
	}
	return &Refusal{reason: errNoDelegator, Message: msg}
}

func (t *Tool) refuseDepth(depth int) error {
	msg := fmt.Sprintf("this agent works at delegation depth %d and the bound is %d, so it cannot delegate a task further; do the work here", depth, t.maxDepth)
	if !t.noShell {
		msg += fmt.Sprintf(", running commands with \"!\" as in %q", exampleCommand)
	}
	return &Refusal{reason: errDepthExceeded, Message: msg}
}

// subject is the act an approver judges and a rule matches. Its JSON keys
// are sorted by contract.CanonicalJSON.
type subject struct {
	Body     string     `json:"body"`
	Commands [][]string `json:"commands"`
	Cwd      string     `json:"cwd"`
	Mode     Mode       `json:"mode"`
	// Sandbox is the confinement's description for a command that runs
	// here under Options.Sandbox; absent otherwise.
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
	Target  string          `json:"target"`
	// Unanalysable is why a command's Commands is null, so a rule, an
	// approver or a person can say why no rule could allow it. Absent when
	// the commands are listed, and for a task.
	Unanalysable string `json:"unanalysable,omitempty"`
}

func (p plan) preview() (contract.Preview, error) {
	s := subject{Body: p.in.Body, Cwd: p.dir, Mode: p.in.Mode, Target: cmp.Or(p.in.Target, LocalTarget)}
	var preview contract.Preview
	switch p.in.Mode {
	case ModeCommand:
		var err error
		s.Commands, err = AnalyzeCommands(p.in.Body) // nil, JSON null, when unanalysable
		if why, ok := errors.AsType[*UnanalysableError](err); ok {
			s.Unanalysable = why.Reason
		} else if err != nil {
			s.Unanalysable = err.Error()
		}
		preview = contract.Preview{
			SideEffect:   contract.SideEffectProcess,
			Capabilities: []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite},
			Dir:          p.dir,
			Summary:      "run " + strconv.Quote(p.in.Body) + " in " + p.dir,
		}
		if p.in.Target != "" {
			preview.Summary = "run " + strconv.Quote(p.in.Body) + " on target " + p.in.Target
		}
		if p.confinement != nil {
			s.Sandbox = p.confinement.Subject
			if p.confinement.Summary != "" {
				preview.Summary += "; " + p.confinement.Summary
			}
		}
	case ModeAgent:
		preview = contract.Preview{
			SideEffect:   contract.SideEffectLocalState,
			Capabilities: []contract.Capability{contract.CapabilityDelegation},
			Dir:          p.dir,
			Summary:      "delegate a task: " + firstLine(p.in.Body, summaryTaskRunes),
		}
	}
	raw, err := contract.CanonicalJSON(s)
	if err != nil {
		return contract.Preview{}, fmt.Errorf("spawn: encoding the preview: %w", err)
	}
	preview.Subject = raw
	return preview, nil
}

// summaryTaskRunes is how much of a task's first line a summary shows. A
// command is never shortened: a summary may be all a person reads.
const summaryTaskRunes = 80

// firstLine returns the first line of s, cut to at most n runes with an
// ellipsis when it was longer or more lines followed.
func firstLine(s string, n int) string {
	line, rest, more := strings.Cut(s, "\n")
	line = strings.TrimRight(line, "\r")
	runes := []rune(line)
	if len(runes) > n {
		return string(runes[:n]) + "…"
	}
	if more && strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return line
}
