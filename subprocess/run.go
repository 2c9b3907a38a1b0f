//go:build unix

package subprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Defaults for the zero values of [Cmd]'s limits.
const (
	DefaultStdoutLimit = 1 << 20  // 1 MiB
	DefaultStderrLimit = 64 << 10 // 64 KiB
	DefaultGrace       = 2 * time.Second
)

// drainWindow is how long output is still read after the process group has
// been killed: time for the pipes to deliver what is already in them, not
// for a grandchild that escaped the group to go on writing. (A variable
// for tests.)
var drainWindow = 200 * time.Millisecond

// testHookDrainDeadline, when set, is called once Run has set the drain
// deadline: tests stall the readers until then.
var testHookDrainDeadline func()

// Cmd describes one run. Its fields are plain configuration, as in
// [exec.Cmd]; a Cmd may be reused and shared, since [Run] never modifies it.
type Cmd struct {
	// Argv is the program and its arguments. Argv[0] with a directory part
	// ("./tools/x", "/usr/bin/x") is a path, relative to Root; a bare name
	// is looked up in the PATH entry of Env, or in this process's PATH when
	// Env has none.
	Argv []string
	// Root anchors relative paths: the program's and Dir. Empty means this
	// process's working directory.
	Root string
	// Dir is the working directory, relative to Root. Empty means Root.
	Dir string
	// Env is the child's whole environment, as NAME=value entries; a later
	// entry wins for a repeated name. Nil means an empty environment.
	Env []string
	// Stdin is written to the program's standard input, which is then
	// closed. Nil gives the program an empty stdin.
	Stdin []byte
	// Timeout bounds the whole run, from start to the end of draining
	// output. Zero means only ctx bounds it.
	Timeout time.Duration
	// Grace is how long the process group has between SIGTERM and SIGKILL.
	// Zero means DefaultGrace.
	Grace time.Duration
	// StdoutLimit and StderrLimit cap what is kept of each stream. Zero
	// means DefaultStdoutLimit and DefaultStderrLimit.
	StdoutLimit, StderrLimit int
	// KeepRunningPastLimit, when set, reads and discards stdout past its
	// limit instead of closing the pipe, so a program that prints a lot still
	// runs to completion (bounded by the deadline).
	KeepRunningPastLimit bool
	// OnStdoutLine and OnStderrLine, when set, receive each line of kept
	// output as it arrives, without its newline. They are called from
	// goroutines of Run and must not block for long.
	OnStdoutLine, OnStderrLine func(line string)
	// Confine, when set, confines the program (the sandbox module's
	// Sandbox.Prepare has this signature). Run calls it after the program
	// and working directory are resolved, with the command about to
	// start; it may rewrite the command's Path, Args, Env and SysProcAttr
	// and may return a start function that Run calls instead of
	// cmd.Start — for a sandbox that must start the program from a thread
	// it has restricted. Run keeps the session setting whatever Confine
	// does (a new session, so no controlling terminal; Setpgid off), and
	// calls release (when not nil) once the program, its group and its
	// output are done. An error means the program must not run: the
	// outcome is StartFailed with a [StartError] whose Op is "confine
	// program", never an unconfined run; Confine releases what it made
	// before returning an error.
	//
	// When Confine returns no start, Run starts the program itself and has
	// it killed when this process dies (Linux: SysProcAttr.Pdeathsig). A
	// Confine that returns a start decides that itself, because the kernel
	// sends the signal when the thread that forked the program ends: it
	// sets Pdeathsig when its start forks on the goroutine Run calls it
	// from (Run's caller's, which waits in Run until the program has been
	// waited for) or from a thread it keeps until then, and never
	// otherwise.
	Confine func(cmd *exec.Cmd) (start func() error, release func(), err error)
}

// Run runs the command and waits for it, its output and its process group
// to be finished. It returns an error only for a Cmd that cannot be run as
// given (wrapping [ErrInvalidCmd]); everything that happens to the program —
// including that it could not start — is in the [Result]'s [Outcome].
func Run(ctx context.Context, c *Cmd) (*Result, error) {
	if err := checkArgv(c.Argv); err != nil {
		return nil, err
	}
	if err := checkEnv(c.Env); err != nil {
		return nil, err
	}
	if c.Timeout < 0 || c.Grace < 0 || c.StdoutLimit < 0 || c.StderrLimit < 0 {
		return nil, fmt.Errorf("%w: Timeout, Grace and the output limits must not be negative", ErrInvalidCmd)
	}
	start := time.Now()
	var runCtx context.Context
	var cancel context.CancelFunc
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	} else {
		runCtx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	res := &Result{}
	finish := func(o Outcome) (*Result, error) {
		res.Outcome = o
		res.Duration = time.Since(start)
		return res, nil
	}
	if runCtx.Err() != nil {
		return finish(stoppedOutcome(ctx))
	}
	env := MergeEnv(c.Env)
	if env == nil {
		env = []string{} // nil would inherit this process's environment
	}
	// With neither Root nor Dir the program runs where this process
	// does: exec.Cmd's empty Dir says so without a Getwd and a stat per
	// run. A Confine is given the directory itself.
	dir := ""
	if c.Root != "" || c.Dir != "" || c.Confine != nil {
		var err error
		dir, err = resolveDir(c.Root, c.Dir)
		if err == nil {
			err = checkDir(dir)
		}
		if err != nil {
			return finish(Outcome{Kind: StartFailed, Err: asStartError("enter working directory", err)})
		}
	}
	program, err := ResolveProgram(c.Argv[0], c.Root, env)
	if err != nil {
		return finish(Outcome{Kind: StartFailed, Err: asStartError("look up program", err)})
	}

	p, err := newPipes(c.Stdin)
	if err != nil {
		return nil, fmt.Errorf("subprocess: creating pipes: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        program,
		Args:        c.Argv,
		Env:         env, // MergeEnv's own copy, never nil
		Dir:         dir,
		Stdout:      p.stdoutW,
		Stderr:      p.stderrW,
		SysProcAttr: &syscall.SysProcAttr{},
	}
	if p.stdinR != nil {
		cmd.Stdin = p.stdinR
	}
	var confinedStart func() error
	if c.Confine != nil {
		var release func()
		confinedStart, release, err = c.Confine(cmd)
		if err != nil {
			p.closeAll()
			return finish(Outcome{Kind: StartFailed, Err: &StartError{Op: "confine program", Err: err}})
		}
		if release != nil {
			defer release()
		}
		if cmd.Env == nil {
			cmd.Env = []string{} // nil would inherit this process's environment
		}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	ownSession(cmd.SysProcAttr)
	startProgram := confinedStart
	if startProgram == nil {
		// The program dies with the thread that forks it, the caller's
		// (see dieWithParent): if the caller locked its goroutine to it,
		// that thread cannot end before Run has waited for the program.
		dieWithParent(cmd.SysProcAttr)
		startProgram = cmd.Start
	}
	reg := beginStart()
	err = startProgram()
	pid := 0
	if err == nil {
		pid = cmd.Process.Pid
	}
	reg.started(pid)
	p.closeChildEnds()
	if err != nil {
		p.closeParentEnds()
		reg.done()
		return finish(Outcome{Kind: StartFailed, Err: startError(cmd.Path, err)})
	}
	pgid := pid // a session leader leads its process group too

	out := &capture{limit: orDefault(c.StdoutLimit, DefaultStdoutLimit), closeAtLimit: !c.KeepRunningPastLimit, onLine: c.OnStdoutLine}
	errs := &capture{limit: orDefault(c.StderrLimit, DefaultStderrLimit), onLine: c.OnStderrLine}
	var streams sync.WaitGroup
	streams.Add(2)
	go func() { defer streams.Done(); out.drain(p.stdoutR) }()
	go func() { defer streams.Done(); errs.drain(p.stderrR) }()
	if p.stdinW != nil {
		streams.Add(1)
		go func() {
			defer streams.Done()
			defer p.stdinW.Close()
			// A child that exits without reading gets its stdin closed; the
			// write then fails with EPIPE, which is not the child's error.
			_, _ = p.stdinW.Write(c.Stdin)
		}()
	}

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	stopped := false
	select {
	case <-waited:
	case <-runCtx.Done():
		select {
		case <-waited: // it finished on its own at the same moment
		default:
			stopped = true
			stopGroup(pgid, orDefault(c.Grace, DefaultGrace), waited)
		}
	}
	// Whatever the program left running in its group dies with it, and
	// with ReapOrphans, so does whatever escaped the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	reg.done()

	// What is already in the pipes is read; a writer that escaped does not
	// hold the call open, and the output it cut short says so.
	drainBy := time.Now().Add(drainWindow)
	_ = p.stdoutR.SetReadDeadline(drainBy)
	_ = p.stderrR.SetReadDeadline(drainBy)
	if p.stdinW != nil {
		_ = p.stdinW.SetWriteDeadline(time.Now())
	}
	if testHookDrainDeadline != nil {
		testHookDrainDeadline()
	}
	streams.Wait()

	res.Stdout, res.StdoutTruncated = out.buf.Bytes(), out.truncated
	res.Stderr, res.StderrTruncated = errs.buf.Bytes(), errs.truncated
	status, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if stopped {
		o := stoppedOutcome(ctx)
		o.Code, o.Signal = exitCode(status), signalOf(status)
		return finish(o)
	}
	if status.Signaled() {
		return finish(Outcome{Kind: Signaled, Signal: status.Signal()})
	}
	return finish(Outcome{Kind: Exited, Code: status.ExitStatus()})
}

// ownSession makes the program a session leader with no controlling
// terminal: it cannot open /dev/tty, so it cannot type into the
// operator's terminal (TIOCSTI) or read from it, and it leads a process
// group of its own, which is how the run is stopped. Setpgid must stay
// off: the setpgid that would follow setsid fails for a session leader.
func ownSession(attr *syscall.SysProcAttr) {
	attr.Setsid = true
	attr.Setpgid, attr.Pgid = false, 0
	attr.Setctty, attr.Foreground = false, false
}

// stopGroup asks the group to stop, makes it after the grace, and returns
// once the program has been waited for.
func stopGroup(pgid int, grace time.Duration, waited <-chan error) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-waited:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	}
}

// stoppedOutcome decides from the caller's context, not from any error
// text, why a run was stopped: the caller cancelled it, or a deadline passed
// (the caller's or Cmd.Timeout).
func stoppedOutcome(parent context.Context) Outcome {
	if errors.Is(parent.Err(), context.Canceled) {
		return Outcome{Kind: Canceled}
	}
	return Outcome{Kind: TimedOut}
}

func exitCode(s syscall.WaitStatus) int {
	if s.Exited() {
		return s.ExitStatus()
	}
	return 0
}

func signalOf(s syscall.WaitStatus) syscall.Signal {
	if s.Signaled() {
		return s.Signal()
	}
	return 0
}

func asStartError(op string, err error) error {
	var se *StartError
	if errors.As(err, &se) {
		return se
	}
	return &StartError{Op: op, Err: err}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// pipes are the three standard streams. The child's ends are handed to the
// process and closed here at once; the parent's ends are read and written
// through the runtime poller, so deadlines apply to them.
type pipes struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
}

// newPipes makes the pipes of a run. A stdin that fits in an empty pipe
// whatever its size limit (one page) is written into it here, before the
// program starts, and the pipe closed: no writer goroutine and no poller
// for it (stdinW stays nil).
func newPipes(stdin []byte) (*pipes, error) {
	p := &pipes{}
	var err error
	if p.stdoutR, p.stdoutW, err = pipe(true); err != nil {
		return nil, err
	}
	if p.stderrR, p.stderrW, err = pipe(true); err != nil {
		p.closeAll()
		return nil, err
	}
	if stdin == nil {
		return p, nil
	}
	if smallStdin > 0 && len(stdin) <= smallStdin {
		if p.stdinR, err = filledPipe(stdin); err != nil {
			p.closeAll()
			return nil, err
		}
		return p, nil
	}
	if p.stdinW, p.stdinR, err = pipe(false); err != nil {
		p.closeAll()
		return nil, err
	}
	return p, nil
}

func (p *pipes) closeChildEnds() { closeFiles(p.stdinR, p.stdoutW, p.stderrW) }

func (p *pipes) closeParentEnds() { closeFiles(p.stdinW, p.stdoutR, p.stderrR) }

func (p *pipes) closeAll() { p.closeChildEnds(); p.closeParentEnds() }

func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
