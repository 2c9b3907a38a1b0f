package subprocess_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// escapes are the ways a program leaves its process group, so that the
// group kill at the end of its run misses what it left behind. Each
// program exits at once, once what it left is in place (it wrote to the
// FIFO).
var escapes = []struct {
	name, script, helper string
}{
	{name: "setsid sleep in the background", script: `setsid sh -c 'echo > "$1"; exec sleep 300' sh "$1" & read x < "$1"`},
	{name: "a child that calls setpgid(0, 0)", script: `"$2" & read x < "$1"`, helper: "escape-setpgid"},
	{name: "a double fork whose grandchild starts a session", script: `"$2" & read x < "$1"`, helper: "escape-doublefork"},
}

// runEscape runs one escape marked with marker and checks that the
// program itself succeeded at once.
func runEscape(t *testing.T, script, helper, marker string) {
	t.Helper()
	env := append(hostEnv(), marker, fifoEnv+"="+mkfifo(t))
	if helper != "" {
		env = append(env, helperEnv+"="+helper)
	}
	fifo := strings.TrimPrefix(env[len(hostEnv())+1], fifoEnv+"=")
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    sh(script, "sh", fifo, os.Args[0]),
		Env:     env,
		Timeout: time.Minute,
	})
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v, stderr %q", res.Outcome, res.Stderr)
	}
}

// Nothing a program started survives its run, however it left the
// process group.
func TestEscapedProcessesDieWithTheRun(t *testing.T) {
	for _, tt := range escapes {
		t.Run(tt.name, func(t *testing.T) {
			marker := newMarker()
			runEscape(t, tt.script, tt.helper, marker)
			requireNoneMarked(t, marker)
		})
	}
}

// The control: without ReapOrphans, each escape leaves a process behind
// (so the test above can see one).
func TestWithoutReapOrphansEscapesSurvive(t *testing.T) {
	if !inChild(t) {
		return
	}
	for _, tt := range escapes {
		t.Run(tt.name, func(t *testing.T) {
			marker := newMarker()
			runEscape(t, tt.script, tt.helper, marker)
			pids := markedProcesses(t, marker)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if len(pids) == 0 {
				t.Fatal("no process survived: the escape did not escape")
			}
		})
	}
}

// The sweep leaves alone what this process runs itself: a program started
// through Track, and one still in this process's session; an untracked
// program in a session of its own is an orphan to it. Each is started from
// a thread that then ends, as a sandbox's restricted thread does, so the
// kernel hands it to the main thread, where the sweep looks for orphans.
func TestSweepSparesTrackedAndOwnSessionPrograms(t *testing.T) {
	tests := []struct {
		name              string
		track, ownSession bool
		swept             bool
	}{
		{name: "tracked, own session", track: true, ownSession: true},
		{name: "untracked, in this process's session"},
		{name: "untracked, own session", ownSession: true, swept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "300")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: tt.ownSession}
			type started struct {
				untrack func()
				err     error
			}
			done := make(chan started, 1)
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends here
				if tt.track {
					untrack, err := subprocess.Track(cmd, nil)
					done <- started{untrack, err}
					return
				}
				done <- started{func() {}, cmd.Start()}
			}()
			st := <-done
			if st.err != nil {
				t.Fatal(st.err)
			}
			waitForMainThreadChild(t, cmd.Process.Pid)
			// Any run ends with a sweep.
			run(t, t.Context(), &subprocess.Cmd{Argv: []string{"/bin/true"}})
			state, _ := procState(cmd.Process.Pid)
			cmd.Process.Kill()
			err := cmd.Wait()
			st.untrack()
			var exit *exec.ExitError
			if tt.swept {
				if errors.As(err, &exit) {
					t.Fatalf("the program was not swept: it was still there to be waited for (%v)", err)
				}
				return
			}
			if state == "" || state == "Z" {
				t.Errorf("the program was swept (state %q)", state)
			}
			if !errors.As(err, &exit) {
				t.Errorf("waiting for the program: %v, want it killed by the test", err)
			}
		})
	}
}

// waitForMainThreadChild waits (boundedly: the thread that started pid is
// ending) until the kernel has handed pid to this process's main thread.
func waitForMainThreadChild(t *testing.T, pid int) {
	t.Helper()
	file := "/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(strings.Fields(string(raw)), strconv.Itoa(pid)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became a child of the main thread", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A sweep due while a tracked program is being started waits for the
// start, then happens: the orphan is gone once the start is over, and the
// new program lives.
func TestSweepPutOffDuringAStartHappensAfterIt(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	entered, proceed := make(chan struct{}), make(chan struct{})
	type tracked struct {
		untrack func()
		err     error
	}
	done := make(chan tracked, 1)
	go func() {
		untrack, err := subprocess.Track(cmd, func() error {
			close(entered)
			<-proceed
			return cmd.Start()
		})
		done <- tracked{untrack, err}
	}()
	<-entered

	marker := newMarker()
	runEscape(t, escapes[0].script, "", marker)
	if len(markedProcesses(t, marker)) == 0 {
		t.Fatal("the run's sweep was not put off while a program was being started")
	}
	close(proceed)
	tr := <-done
	if tr.err != nil {
		t.Fatal(tr.err)
	}
	if pids := markedProcesses(t, marker); len(pids) != 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the sweep put off was not made once the start was over: %v left", pids)
	}
	if state, _ := procState(cmd.Process.Pid); state == "" || state == "Z" {
		t.Errorf("the program started meanwhile was swept (state %q)", state)
	}
	cmd.Process.Kill()
	cmd.Wait()
	tr.untrack()
}

// When the process running a program dies, even by SIGKILL, the program
// dies with it.
func TestProgramDiesWithItsParent(t *testing.T) {
	fifo := mkfifo(t)
	marker := newMarker()
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), helperEnv+"=hold", fifoEnv+"="+fifo, marker)
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fifo) // blocks until the program opens it
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	pid, convErr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || convErr != nil {
		holder.Process.Kill()
		holder.Wait()
		t.Fatalf("the program's pid: %q (%v, %v)", line, err, convErr)
	}
	holder.Process.Kill()
	holder.Wait()
	waitDead(t, pid)
}
