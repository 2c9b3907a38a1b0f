package spawn

import (
	"context"
	"os"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Executor runs command bodies somewhere: here (the local executor every
// [Tool] has) or on a target a host registers with [WithTarget].
// Implementations must be safe for concurrent use.
type Executor interface {
	// RunCommand runs req.Body and reports how it ended. The outcome of a
	// command that ran, or could not start, belongs in the result's
	// Outcome; an error means the executor could not run anything at all
	// (a target that cannot be reached, a request it cannot carry). Lines
	// of output should go to [contract.Progress] as they arrive.
	RunCommand(ctx context.Context, req CommandRequest) (CommandResult, error)
}

// CommandRequest is one command for an [Executor], from the parsed input.
type CommandRequest struct {
	// Body is the command exactly as the model wrote it after the "!" (or
	// after "!@name "): shell text for /bin/sh -c, never re-quoted.
	Body string
	// Target is the registered target name; "" means here.
	Target string
	// Dir is where the command runs: the workspace root here, "" (the
	// target's own choice) on a target.
	Dir string
	// Env is the command's whole environment. Here: the allowlisted
	// ambient variables, then the runtime's command environment. On a
	// target: the runtime's command environment only, since this machine's
	// PATH and HOME say nothing about another.
	Env []string
	// Timeout bounds the command.
	Timeout time.Duration
}

// CommandResult is how a command ended and what it printed.
type CommandResult struct {
	// Stdout and Stderr are the captured output, up to the executor's
	// limits.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that output past the
	// limits was dropped.
	StdoutTruncated, StderrTruncated bool
	// Outcome says how the command ended; a success is an exit with code 0.
	Outcome subprocess.Outcome
}

// ambientAllowlist is every ambient variable a local command sees: what
// programs need to be found and to behave (PATH, HOME, USER, locale,
// terminal, temporary directory, shell). Anything else in basis's own
// environment — API keys, cloud credentials, tokens — stays out of reach of
// model-written commands.
var ambientAllowlist = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL"}

// localEnv is a local command's environment: the allowlisted entries of
// ambient, then commandEnv (later wins).
func localEnv(ambient, commandEnv []string) []string {
	if ambient == nil {
		ambient = os.Environ()
	}
	kept := make([]string, 0, len(ambientAllowlist))
	for _, name := range ambientAllowlist {
		if v, ok := subprocess.LookupEnv(ambient, name); ok {
			kept = append(kept, name+"="+v)
		}
	}
	return subprocess.MergeEnv(kept, commandEnv)
}

// localExecutor runs commands on this machine with /bin/sh -c.
type localExecutor struct{}

func (localExecutor) RunCommand(ctx context.Context, req CommandRequest) (CommandResult, error) {
	cmd := &subprocess.Cmd{
		Argv:    []string{"/bin/sh", "-c", req.Body},
		Root:    req.Dir,
		Env:     req.Env,
		Timeout: req.Timeout,
		// A build that prints more than the limit keeps running to its end
		// instead of dying of SIGPIPE half-way; only the head is kept.
		KeepRunningPastLimit: true,
	}
	if contract.HasProgress(ctx) {
		progress := func(line string) { contract.Progress(ctx, line) }
		cmd.OnStdoutLine, cmd.OnStderrLine = progress, progress
	}
	res, err := subprocess.Run(ctx, cmd)
	if err != nil {
		return CommandResult{}, err
	}
	return CommandResult{
		Stdout:          res.Stdout,
		Stderr:          res.Stderr,
		StdoutTruncated: res.StdoutTruncated,
		StderrTruncated: res.StderrTruncated,
		Outcome:         res.Outcome,
	}, nil
}
