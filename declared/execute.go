//go:build unix

package declared

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// Execute runs the call: the canonical form of the input — the bytes the
// preview's Subject shows — on the program's stdin; the expanded command
// in the expanded cwd (both resolved against the workspace root), its
// program the absolute path the preview showed; the environment
// inherited, then the runtime's command environment, then the manifest's
// env. stdout, trailing newlines trimmed, is the result. stderr lines go
// to the context's progress hook as they arrive.
//
// Input the preview would refuse is refused here too (a check that a
// missing gate removes is not a check), and so is a call to an
// unavailable tool ([*UnavailableError]) — a workspace tool's cwd is
// resolved once more, right before the run, and the program starts in
// the real path found, inside the workspace — or one its sandbox cannot
// confine (wrapping the sandbox's error); nothing starts. With [Options.Sandbox] set
// the program runs confined as the preview's "sandbox" said: the
// sandbox may start it through a trampoline, but what it executes is
// still the path the preview named. Every failure
// of the program is a [*RunError] wrapping the [*subprocess.ExitError],
// whose text says what happened: "NAME exited 3: <output>" (stdout and
// stderr both, labelled, when both have text), "NAME was killed by signal
// SIGSEGV", "NAME did not finish within 60 seconds (its timeout_ms) and
// was stopped; ...", "NAME could not start ./.basis/tools/x: permission
// denied". The program is always named as written in the manifest.
func (t *Tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	if u := t.state.unavailable; u != nil {
		return contract.Result{}, u
	}
	input, err := t.checkInput(ctx, call.Input)
	if err != nil {
		return contract.Result{}, err
	}
	// Resolved again, right before the run: the preview's answer may be
	// out of date.
	dir, err := t.workdir()
	if err != nil {
		var u *UnavailableError
		if errors.As(err, &u) {
			return contract.Result{}, u
		}
		exit := &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.StartFailed, Err: err}}
		return contract.Result{}, &RunError{Tool: t.spec.Name, Err: exit, msg: t.spec.Name + " could not start: " + t.workdirFault(err)}
	}
	program, err := t.program()
	if err != nil {
		exit := &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.StartFailed, Err: err}}
		return contract.Result{}, &RunError{Tool: t.spec.Name, Err: exit,
			msg: t.spec.Name + " could not start " + quoteWord(t.spec.Command[0]) + ": " + startReason(err)}
	}
	// The preview's confinement, when this call had one: the sandbox
	// works out how to confine the program when it starts it.
	confinement := t.state.previewed.take(call.ID)
	if confinement == nil && t.state.sandbox != nil {
		if confinement, err = t.confinement(); err != nil {
			return contract.Result{}, err
		}
	}
	run := t.spec.run()
	// argv[0] is the resolved path: subprocess then looks nothing up, so
	// the program that starts is the one the preview named.
	argv := append([]string{program}, run.argv[1:]...)
	cmd := &subprocess.Cmd{
		Argv:    argv,
		Root:    t.spec.Root,
		Dir:     dir,
		Env:     withTraceContext(ctx, run.env),
		Stdin:   input,
		Timeout: t.spec.Timeout,
		// A program that prints more than the limit still runs to its
		// end, so a long answer is cut rather than turned into SIGPIPE.
		KeepRunningPastLimit: true,
	}
	if confinement != nil {
		cmd.Confine = confinement.Confine
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
	msg := t.failure(ctx, res, started)
	if line := refusalOf(confinement); line != "" && (res.Outcome.Kind == subprocess.Exited || res.Outcome.Kind == subprocess.Signaled) {
		// A refused write or connection reads like the tool's own
		// failure; one line says which sandbox ran it, what it refused
		// where the kernel says, and what would allow more.
		msg += "\n" + line
	}
	return contract.Result{}, &RunError{Tool: t.spec.Name, Err: res.Err(), msg: msg}
}

// refusalOf is the line a failed run under c ends with: c.Refused's,
// which may name what the kernel refused, or c.Refusal.
func refusalOf(c *subprocess.Confinement) string {
	switch {
	case c == nil:
		return ""
	case c.Refused != nil:
		return c.Refused()
	}
	return c.Refusal
}

// withTraceContext puts the call's trace context, when it has one
// ([contract.TraceContextOf]), into a program's environment as TRACEPARENT
// and TRACESTATE (the OpenTelemetry convention for environment carriers),
// over any the environment had: the program's work joins the call's
// trace. Without one env is returned as it is.
func withTraceContext(ctx context.Context, env []string) []string {
	tc, ok := contract.TraceContextOf(ctx)
	if !ok {
		return env
	}
	out := make([]string, 0, len(env)+2)
	for _, e := range env {
		if name, _, _ := strings.Cut(e, "="); name != "TRACEPARENT" && name != "TRACESTATE" {
			out = append(out, e)
		}
	}
	out = append(out, "TRACEPARENT="+tc.Parent)
	if tc.State != "" {
		out = append(out, "TRACESTATE="+tc.State)
	}
	return out
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
		return name + " exited " + strconv.Itoa(o.Code) + said(res, " and said nothing")
	case subprocess.Signaled:
		return name + " was killed by signal " + subprocess.SignalName(o.Signal) + said(res, "")
	case subprocess.TimedOut:
		return t.timedOut(ctx, started)
	case subprocess.Canceled:
		return name + " was stopped because the call was cancelled"
	case subprocess.StartFailed:
		var se *subprocess.StartError
		if errors.As(o.Err, &se) && se.Op == "enter working directory" {
			where := "the workspace root"
			if t.spec.Cwd != "" {
				where = "its working directory " + quoteWord(t.spec.Cwd)
			}
			return name + " could not start: " + where + " cannot be entered: " + se.Err.Error()
		}
		return name + " could not start " + quoteWord(t.spec.Command[0]) + ": " + startReason(o.Err)
	}
	return name + " " + o.Kind.String()
}

func startReason(err error) string {
	var se *subprocess.StartError
	if errors.As(err, &se) && se.Err != nil {
		return se.Err.Error()
	}
	if err == nil {
		return "unknown reason"
	}
	return configfile.Reason(err)
}

// timedOut names the limit that fired and the setting that raises it.
// The runtime bounds a call by the tool's own timeout as well (it reads
// it from the Descriptor), so a caller's deadline close to timeout_ms is
// timeout_ms firing; one clearly shorter is the caller's own.
func (t *Tool) timedOut(ctx context.Context, started time.Time) string {
	name, limit := t.spec.Name, t.spec.Timeout
	slack := min(limit/10, time.Second)
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(started) < limit-slack {
		allowed := max(deadline.Sub(started), 0).Round(10 * time.Millisecond)
		return name + " did not finish within the " + durationText(allowed) + " its caller allowed and was stopped; " +
			"that deadline is the caller's, shorter than the tool's own timeout_ms (" + strconv.FormatInt(limit.Milliseconds(), 10) + "), so the caller must allow more"
	}
	if t.state.timeoutSet {
		return name + " did not finish within " + durationText(limit) + " and was stopped; its limit is timeout_ms " +
			strconv.FormatInt(limit.Milliseconds(), 10) + " in " + t.spec.Source + ": raise it there if the tool needs longer"
	}
	return name + " did not finish within " + durationText(limit) + " and was stopped; that is the default limit, as " +
		t.spec.Source + " gives this tool no timeout_ms: set one there if the tool needs longer"
}

// said is what a failed program printed, for the end of a message:
// ": <output>", with stdout and stderr labelled when both have text, each
// noted when cut at its limit; or none when it printed nothing.
func said(res *subprocess.Result, none string) string {
	out := strings.TrimRight(string(res.Stdout), " \t\r\n")
	errs := strings.TrimRight(string(res.Stderr), " \t\r\n")
	if res.StdoutTruncated {
		out += "\n[stdout truncated: only the first " + sizeText(len(res.Stdout)) + " was kept]"
	}
	if res.StderrTruncated {
		errs += "\n[stderr truncated: only the first " + sizeText(len(res.Stderr)) + " was kept]"
	}
	switch {
	case out != "" && errs != "":
		return ":\nstdout:\n" + out + "\nstderr:\n" + errs
	case errs != "":
		return ": " + errs
	case out != "":
		return ": " + out
	}
	return none
}

// durationText writes a duration for people: "60 seconds", "1 second",
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

// sizeText writes a byte count for people: "1 MiB", "64 KiB", "100 bytes".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
