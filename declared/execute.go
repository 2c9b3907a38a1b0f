package declared

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Execute runs the call: the input object, exactly as given, on the
// program's stdin; the expanded command in the expanded cwd (both
// resolved against the workspace root); the environment inherited, then
// the runtime's command environment, then the manifest's env. stdout,
// trailing newlines trimmed, is the result. stderr lines go to the
// context's progress hook as they arrive.
//
// Input that does not match the schema is refused with an [*InputError]
// and nothing starts. Every failure of the program is a [*RunError]
// wrapping the [*subprocess.ExitError], whose text says what happened:
// "NAME exited 3: <stderr>", "NAME was killed by signal SIGSEGV", "NAME
// did not finish within 60 seconds and was stopped", "NAME could not
// start ./.basis/tools/x: permission denied". The program is always named
// as written in the manifest.
func (t *Tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	input, err := t.checkInput(call.Input)
	if err != nil {
		return contract.Result{}, err
	}
	run := t.spec.run()
	cmd := &subprocess.Cmd{
		Argv:    run.argv,
		Root:    t.spec.Root,
		Dir:     run.dir,
		Env:     run.env,
		Stdin:   input,
		Timeout: t.spec.Timeout,
		// A program that prints more than the limit still runs to its
		// end, so a long answer is cut rather than turned into SIGPIPE.
		KeepRunningPastLimit: true,
	}
	if contract.HasProgress(ctx) {
		cmd.OnStderrLine = func(line string) { contract.Progress(ctx, line) }
	}
	started := time.Now()
	res, err := subprocess.Run(ctx, cmd)
	if err != nil {
		return contract.Result{}, &RunError{Tool: t.spec.Name, Err: err, msg: t.spec.Name + " could not start: " + err.Error()}
	}
	if res.Outcome.Success() {
		return t.result(res), nil
	}
	return contract.Result{}, &RunError{Tool: t.spec.Name, Err: res.Err(), msg: t.failure(ctx, res, started)}
}

// result is what a successful run gives the model.
func (t *Tool) result(res *subprocess.Result) contract.Result {
	text := strings.TrimRight(string(res.Stdout), "\r\n")
	if text == "" && !res.StdoutTruncated {
		text = t.spec.Name + " finished and printed nothing"
	}
	if res.StdoutTruncated {
		text += "\n[output truncated: " + t.spec.Name + " printed more than " + sizeText(subprocess.DefaultStdoutLimit) + "; only the first " + sizeText(subprocess.DefaultStdoutLimit) + " is shown]"
	}
	return contract.Result{Text: text, Truncated: res.StdoutTruncated}
}

// failure says, in one message the model can act on, how the run failed.
func (t *Tool) failure(ctx context.Context, res *subprocess.Result, started time.Time) string {
	name := t.spec.Name
	o := res.Outcome
	switch o.Kind {
	case subprocess.Exited:
		if said := output(res); said != "" {
			return name + " exited " + strconv.Itoa(o.Code) + ": " + said
		}
		return name + " exited " + strconv.Itoa(o.Code) + " and said nothing"
	case subprocess.Signaled:
		msg := name + " was killed by signal " + subprocess.SignalName(o.Signal)
		if said := output(res); said != "" {
			msg += ": " + said
		}
		return msg
	case subprocess.TimedOut:
		if deadline, ok := ctx.Deadline(); ok && deadline.Before(started.Add(t.spec.Timeout)) {
			return name + " did not finish before the call's deadline and was stopped"
		}
		return name + " did not finish within " + durationText(t.spec.Timeout) + " and was stopped"
	case subprocess.Canceled:
		return name + " was stopped because the call was cancelled"
	case subprocess.StartFailed:
		var se *subprocess.StartError
		why := "unknown reason"
		if errors.As(o.Err, &se) {
			why = se.Err.Error()
			if se.Op == "enter working directory" {
				where := "the workspace root"
				if t.spec.Cwd != "" {
					where = "its working directory " + quoteWord(t.spec.Cwd)
				}
				return name + " could not start: " + where + " cannot be entered: " + why
			}
		}
		return name + " could not start " + quoteWord(t.spec.Command[0]) + ": " + why
	}
	return name + " " + o.Kind.String()
}

// output is what a failed program said: its stderr, or its stdout when
// stderr is empty, trailing whitespace trimmed.
func output(res *subprocess.Result) string {
	said, cut := strings.TrimRight(string(res.Stderr), " \t\r\n"), res.StderrTruncated
	if said == "" {
		said, cut = strings.TrimRight(string(res.Stdout), " \t\r\n"), res.StdoutTruncated
	}
	if said != "" && cut {
		said += " [truncated]"
	}
	return said
}

// durationText writes a timeout for people: "60 seconds", "1 second",
// "250 milliseconds", "1.5 seconds".
func durationText(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + " seconds"
	case d < time.Second:
		if d == time.Millisecond {
			return "1 millisecond"
		}
		return strconv.FormatInt(d.Milliseconds(), 10) + " milliseconds"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds"
}

func sizeText(n int) string {
	if n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n>>10) + " KiB"
}
