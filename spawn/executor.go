//go:build unix

package spawn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Executor runs command bodies somewhere: here (the local executor every
// [Tool] has) or on a target a host registers in [Options.Targets].
// Implementations must be safe for concurrent use.
type Executor interface {
	// RunCommand runs req.Body and reports how it ended. How a command
	// that ran, or could not start, ended belongs in the result's End; an
	// error means the executor could not run anything at all (a target
	// that cannot be reached, a request it cannot carry). Lines of output
	// should go to [contract.Progress] as they arrive.
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
	// ambient variables, then the runtime's command environment, with PATH
	// cut to its absolute entries. On a target: the runtime's command
	// environment only, since this machine's PATH and HOME say nothing
	// about another.
	Env []string
	// Timeout bounds the command.
	Timeout time.Duration
	// Confine, when not nil, confines the command as [Options.Sandbox]
	// said (subprocess.Cmd's Confine hook). Only the local executor gets
	// one; it must not run the command without it.
	Confine func(cmd *exec.Cmd) (start func() error, release func(), err error)
}

// CommandResult is how a command ended and what it printed. It is spawn's
// own type, so an executor on another machine needs nothing from the
// package that runs programs here.
type CommandResult struct {
	// Stdout and Stderr are the captured output, up to the executor's
	// limits.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that output past the
	// limits was dropped.
	StdoutTruncated, StderrTruncated bool
	// End says how the command ended. Its zero value is an exit with code
	// 0, a success.
	End CommandEnd
}

// CommandEnd says how a command ended. Several fields may be set (a
// command that timed out may also have died of the signal that stopped
// it); the first of these that applies decides: StartErr, TimedOut,
// Canceled, Signal, ExitCode. The zero value is an exit with code 0.
type CommandEnd struct {
	// StartErr, when not nil, says why the command could not start.
	StartErr error
	// TimedOut reports that the command's Timeout passed and it was
	// stopped.
	TimedOut bool
	// Canceled reports that the call's context was cancelled and the
	// command was stopped.
	Canceled bool
	// Signal, when not "", names the signal that killed the command, as
	// "SIGSEGV".
	Signal string
	// ExitCode is the command's exit status when it exited.
	ExitCode int
}

// outcome is End as a subprocess outcome. A signal is named in End; the
// number is found by name, and is 0 for a name this system lacks.
func (e CommandEnd) outcome() subprocess.Outcome {
	var sig syscall.Signal
	if e.Signal != "" {
		for n := syscall.Signal(1); n < 65; n++ {
			if subprocess.SignalName(n) == e.Signal {
				sig = n
				break
			}
		}
	}
	switch e.how() {
	case endStartFailed:
		return subprocess.Outcome{Kind: subprocess.StartFailed, Err: e.StartErr}
	case endTimedOut:
		return subprocess.Outcome{Kind: subprocess.TimedOut, Signal: sig}
	case endCanceled:
		return subprocess.Outcome{Kind: subprocess.Canceled, Signal: sig}
	case endSignaled:
		return subprocess.Outcome{Kind: subprocess.Signaled, Signal: sig}
	}
	return subprocess.Outcome{Kind: subprocess.Exited, Code: e.ExitCode}
}

// how a command ended, in the order CommandEnd documents.
type ending int

const (
	endExited ending = iota
	endSignaled
	endCanceled
	endTimedOut
	endStartFailed
)

func (e CommandEnd) how() ending {
	switch {
	case e.StartErr != nil:
		return endStartFailed
	case e.TimedOut:
		return endTimedOut
	case e.Canceled:
		return endCanceled
	case e.Signal != "":
		return endSignaled
	}
	return endExited
}

// Success reports whether the command exited with code 0.
func (e CommandEnd) Success() bool { return e.how() == endExited && e.ExitCode == 0 }

// String says how the command ended in words: "exited with code 3",
// "was killed by signal SIGSEGV", "timed out and was stopped", "was
// cancelled and stopped", "could not start: ...". It is total: any value
// an executor builds has words.
func (e CommandEnd) String() string {
	switch e.how() {
	case endStartFailed:
		return "could not start: " + e.StartErr.Error()
	case endTimedOut:
		return "timed out and was stopped"
	case endCanceled:
		return "was cancelled and stopped"
	case endSignaled:
		return "was killed by signal " + e.Signal
	}
	return fmt.Sprintf("exited with code %d", e.ExitCode)
}

// commandEnd translates how a local run ended.
func commandEnd(o subprocess.Outcome) CommandEnd {
	end := CommandEnd{ExitCode: o.Code}
	if o.Signal != 0 {
		end.Signal = subprocess.SignalName(o.Signal)
	}
	switch o.Kind {
	case subprocess.Exited, subprocess.Signaled:
	case subprocess.TimedOut:
		end.TimedOut = true
	case subprocess.Canceled:
		end.Canceled = true
	default:
		// StartFailed, and any kind this package does not know: never a
		// success, and never a nil reason.
		end.StartErr = &subprocess.ExitError{Outcome: o}
		if o.Err != nil {
			end.StartErr = o.Err
		}
	}
	return end
}

// ambientAllowlist is every ambient variable a local command sees: what
// programs need to be found and to behave (PATH, HOME, USER, locale,
// terminal, temporary directory, shell). Anything else in basis's own
// environment — API keys, cloud credentials, tokens — stays out of reach of
// model-written commands.
var ambientAllowlist = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL"}

// DefaultPath is a local command's PATH when the one it would get has no
// absolute entry (or there is none): a shell left without a PATH falls
// back to a built-in one, which for bash may end in ".".
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// localEnv is a local command's environment: the allowlisted entries of
// ambient, then commandEnv (later wins), with PATH cut to its absolute
// entries.
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
	env := subprocess.MergeEnv(kept, commandEnv)
	path, _ := subprocess.LookupEnv(env, "PATH")
	return subprocess.MergeEnv(env, []string{"PATH=" + absolutePath(path)})
}

// absolutePath keeps the absolute entries of a PATH value. An empty entry,
// ".", or any relative one is resolved by the shell against the working
// directory — the workspace, whose files a repository controls — so a
// repository's ./ls would run where a rule allowed ls.
func absolutePath(path string) string {
	var kept []string
	for _, dir := range strings.Split(path, ":") {
		if filepath.IsAbs(dir) {
			kept = append(kept, dir)
		}
	}
	if len(kept) == 0 {
		return DefaultPath
	}
	return strings.Join(kept, ":")
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
		Confine:              req.Confine,
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
		End:             commandEnd(res.Outcome),
	}, nil
}
