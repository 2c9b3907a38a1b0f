//go:build unix

package spawn

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/childenv"
	"github.com/basis-go/basis/subprocess"
)

// everything passes every variable that looks like a credential: of the
// delegate's environment, only basis's own are kept back.
var everything = []string{"*"}

// Delegator takes the tasks a model hands to a subagent. Implementations
// must be safe for concurrent use.
type Delegator interface {
	// Delegate gives task to a subagent and returns its answer, the text
	// the model reads. ctx's [contract.DelegationDepth] is the depth the
	// subagent works at: the spawn tool has already added one to its own.
	Delegate(ctx context.Context, task string) (string, error)
}

// CommandDelegator delegates to a program, so any agent command line can
// be a subagent: it runs Argv with the task on stdin and reads the answer
// from stdout. The program's stderr lines go to the context's progress
// hook as they arrive.
type CommandDelegator struct {
	// Argv is the program and its arguments, run through
	// [subprocess.Run]: no shell; a bare name is looked up in Env's PATH.
	Argv []string
	// Dir is where the program runs; "" is this process's working
	// directory. Relative program paths resolve against it.
	Dir string
	// Env is the environment the delegate inherits, all of it but
	// basis's own BASIS_* variables (which configure basis, and one of
	// which, BASIS_SERVE_TOKEN, answers basis's approval questions): the
	// delegate is a program a person configured, such as an agent that
	// needs its own API key, so credentials are not withheld from it as
	// they are from tools (contract/childenv). The runtime passes
	// os.Environ(). Nil is an empty environment.
	Env []string
	// Timeout bounds one task; 0 leaves only the context's deadline.
	Timeout time.Duration
}

// Delegate runs the program for one task. Its environment is Env without
// basis's own BASIS_* variables, plus [DepthEnv] set to the context's
// delegation depth, so a basis started as the delegate knows how deep it
// is and keeps the bound. An answer with
// trailing newlines has them trimmed. A program that does not exit with
// code 0 is an error carrying its stderr (or stdout, when stderr is empty)
// and wrapping the *[subprocess.ExitError].
func (d CommandDelegator) Delegate(ctx context.Context, task string) (string, error) {
	depth := contract.DelegationDepth(ctx)
	cmd := &subprocess.Cmd{
		Argv:    d.Argv,
		Root:    d.Dir,
		Env:     subprocess.MergeEnv(childenv.Inherited(d.Env, everything), []string{DepthEnv + "=" + strconv.Itoa(depth)}),
		Stdin:   []byte(task),
		Timeout: d.Timeout,
	}
	if contract.HasProgress(ctx) {
		cmd.OnStderrLine = func(line string) { contract.Progress(ctx, line) }
	}
	res, err := subprocess.Run(ctx, cmd)
	if err != nil {
		return "", fmt.Errorf("the delegate command cannot be run: %w", err)
	}
	answer := strings.TrimRight(string(res.Stdout), "\r\n")
	if err := res.Err(); err != nil {
		said := strings.TrimRight(string(res.Stderr), "\r\n")
		if said == "" {
			said = answer
		}
		switch {
		case said != "":
			return "", fmt.Errorf("the delegate %w:\n%s", err, said)
		case res.Outcome.Kind == subprocess.Exited || res.Outcome.Kind == subprocess.Signaled:
			return "", fmt.Errorf("the delegate %w and printed nothing", err)
		}
		return "", fmt.Errorf("the delegate %w", err)
	}
	if res.StdoutTruncated {
		answer += fmt.Sprintf("\n[answer truncated: only the first %d bytes were kept]", len(res.Stdout))
	}
	return answer, nil
}
