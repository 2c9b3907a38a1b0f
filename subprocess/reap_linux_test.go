package subprocess_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
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
// program in a session of its own is an orphan to it.
func TestSweepSparesTrackedAndOwnSessionPrograms(t *testing.T) {
	tests := []struct {
		name         string
		track, setsd bool
		swept        bool
	}{
		{name: "tracked, own session", track: true, setsd: true},
		{name: "untracked, in this process's session", setsd: false},
		{name: "untracked, own session", setsd: true, swept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "300")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: tt.setsd}
			untrack := func() {}
			if tt.track {
				var err error
				if untrack, err = subprocess.Track(cmd, nil); err != nil {
					t.Fatal(err)
				}
			} else if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Any run ends with a sweep.
			run(t, t.Context(), &subprocess.Cmd{Argv: []string{"/bin/true"}})
			state, _ := procState(cmd.Process.Pid)
			cmd.Process.Kill()
			err := cmd.Wait()
			untrack()
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
