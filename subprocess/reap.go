//go:build unix

package subprocess

import (
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ReapOrphans makes this process the reaper of every process its programs
// leave behind, and from then on kills them when a run ends.
//
// A program can leave its process group, and so escape the group kill
// that ends each run: "setsid sleep 300 &", a child that calls
// setpgid(0, 0), a double fork into a new session. Once ReapOrphans has
// been called, such an orphan is handed to this process instead of to
// init (Linux: prctl PR_SET_CHILD_SUBREAPER), and when a run of [Run] ends
// — its program waited for, its group killed — a sweep sends SIGKILL to
// every orphan the kernel has handed to this process, and reaps it;
// killing an orphan hands its own children here, so the sweep repeats
// until none is left (one that does not die within 5 s of its SIGKILL,
// stuck in the kernel, is left for a later sweep to reap). The sweep also
// runs when a program [Track] watched is untracked.
//
// It is process-wide and cannot be undone: call it once, early in main,
// in a program that runs other people's programs (the basis command does).
// The kernel hands orphans to the process's main thread, together with the
// children of any thread that ended, so the sweep cannot tell an orphan
// from a program this process started from a thread that has ended since
// (as a sandbox that starts programs from a restricted thread does), or
// from its main thread. It leaves alone the programs Run and Track are
// running and every child still in this process's session (a program
// started without a session of its own, as exec.Command does by default;
// no program Run starts can join it); every other program this process
// starts outside Run must be started through [Track].
//
// A call's processes are its tree while it runs, but once orphaned they
// are no one's: a process that escaped from a program still running may
// be swept when another run ends.
//
// On systems other than Linux it returns an error wrapping
// [errors.ErrUnsupported] and changes nothing; there a program that leaves
// its process group outlives its run.
func ReapOrphans() error {
	if err := becomeSubreaper(); err != nil {
		return err
	}
	reaping.Store(true)
	return nil
}

// Track runs start, which starts cmd (cmd.Start when start is nil), so
// that the sweep of [ReapOrphans] never kills the program: for a program
// this process starts outside [Run], in a session of its own — a server
// an SDK starts, a host's own. It returns start's error, and untrack,
// never nil, to call once cmd has been waited for (or at once, when start
// failed and nothing runs): untracking before the wait would let a sweep
// reap the program under exec's feet. Untracking sweeps, so what the
// program left behind dies with it.
//
// While start runs, sweeps are put off: the program exists before cmd.Process
// says which one it is. A sweep put off so is made once no start is under
// way any more. start must therefore return promptly.
func Track(cmd *exec.Cmd, start func() error) (untrack func(), err error) {
	if start == nil {
		start = cmd.Start
	}
	s := beginStart()
	// Deferred, so that a start that panics does not put off sweeps for
	// good.
	defer func() {
		pid := 0
		if cmd.Process != nil {
			pid = cmd.Process.Pid
		}
		s.started(pid)
	}()
	var once sync.Once
	return func() { once.Do(s.done) }, start()
}

// reaping is set once ReapOrphans succeeded.
var reaping atomic.Bool

// live is what a sweep must leave alone: the programs Run and Track have
// started and not yet waited for, and whether any is being started.
var live struct {
	mu   sync.Mutex
	pids map[int]int // pid → how many registrations hold it
	// starting counts starts under way; no sweep runs while it is not 0,
	// since the new program is a child whose pid nobody knows yet.
	starting int
	// pending says a sweep was put off because of a start.
	pending bool
}

// sweeping makes sweeps one at a time: a sweep reaps what it killed,
// so no other could kill a pid the first has freed and the kernel reused.
var sweeping sync.Mutex

// lingering holds the pids a sweep killed but that did not die within
// reapWindow (stuck in the kernel): later sweeps reap them once they are
// gone, without waiting for them again. Guarded by sweeping.
var lingering = map[int]bool{}

// liveStart is one program's registration.
type liveStart struct{ pid int }

// beginStart registers a start under way.
func beginStart() *liveStart {
	live.mu.Lock()
	live.starting++
	live.mu.Unlock()
	return &liveStart{}
}

// started ends the start: pid (0 when nothing started) is a live program
// until done. A sweep put off meanwhile is made now, once no other start
// is under way.
func (s *liveStart) started(pid int) {
	live.mu.Lock()
	live.starting--
	if pid > 0 {
		if live.pids == nil {
			live.pids = map[int]int{}
		}
		live.pids[pid]++
		s.pid = pid
	}
	catchUp := live.starting == 0 && live.pending
	live.mu.Unlock()
	if catchUp {
		sweep()
	}
}

// done says the program has been waited for, and sweeps.
func (s *liveStart) done() {
	if s.pid > 0 {
		live.mu.Lock()
		if live.pids[s.pid]--; live.pids[s.pid] <= 0 {
			delete(live.pids, s.pid)
		}
		live.mu.Unlock()
	}
	sweep()
}

// reapWindow bounds how long a sweep waits for what it killed to die: a
// process stuck in the kernel does not hold the end of every run; it is
// left, killed, for a later sweep to reap.
const reapWindow = 5 * time.Second

// sweep kills and reaps every orphan of this process (see [orphans]), until
// there is none; it does nothing unless ReapOrphans was called, and is put
// off while a program is being started.
func sweep() {
	if !reaping.Load() {
		return
	}
	sweeping.Lock()
	defer sweeping.Unlock()
	for pid := range lingering {
		if reap(pid, time.Time{}) {
			delete(lingering, pid)
		}
	}
	deadline := time.Now().Add(reapWindow)
	for {
		live.mu.Lock()
		if live.starting > 0 {
			live.pending = true
			live.mu.Unlock()
			return
		}
		live.pending = false
		// Under the lock, so no registered start forks between the list
		// and the kill.
		victims := orphans(func(pid int) bool { return live.pids[pid] > 0 || lingering[pid] })
		for _, pid := range victims {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		live.mu.Unlock()
		if len(victims) == 0 {
			return
		}
		for _, pid := range victims {
			if !reap(pid, deadline) {
				lingering[pid] = true
			}
		}
	}
}

// reap waits until deadline for pid, a child this process killed, and
// reports whether it is gone. Only the sweep waits for such a child, so
// it is never one that os/exec waits for.
func reap(pid int, deadline time.Time) bool {
	pause := 50 * time.Microsecond
	for {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil || got == pid:
			return true
		case time.Now().After(deadline):
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
