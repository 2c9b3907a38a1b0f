//go:build unix

package subprocess_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// A Confine hook that swaps the command for a wrapper and starts it
// itself: the wrapper runs, sees the original argv, the group is still
// in a session of its own, and release comes after the program and its background grandchild
// are gone.
func TestConfineRewritesTheCommandAndReleasesAfterTheRun(t *testing.T) {
	var seen struct {
		path, dir string
		args      []string
	}
	var releasedWhileRunning = true
	var ownSession, startedThroughHook bool
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    []string{"/bin/echo", "hello", "world"},
		Env:     []string{"KEEP=1"},
		Timeout: 10 * time.Second,
		Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
			seen.path, seen.dir, seen.args = cmd.Path, cmd.Dir, append([]string(nil), cmd.Args...)
			// The wrapper prints its arguments, starts a grandchild that
			// would outlive the call, and asks for the process group
			// setting instead of a new session; Run must restore it (and
			// clear Setpgid: setpgid fails for a session leader).
			cmd.Path = "/bin/sh"
			cmd.Args = append([]string{"sh", "-c", `echo wrapped "$@" "$KEEP"; sleep 30 &`, "sh"}, cmd.Args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			start := func() error {
				startedThroughHook = true
				return cmd.Start()
			}
			return start, func() {
				ownSession = cmd.SysProcAttr != nil && cmd.SysProcAttr.Setsid && !cmd.SysProcAttr.Setpgid
				releasedWhileRunning = cmd.ProcessState == nil
			}, nil
		},
	})
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v, stderr %q", res.Outcome, res.Stderr)
	}
	if got, want := strings.TrimSpace(string(res.Stdout)), "wrapped /bin/echo hello world 1"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if seen.path != "/bin/echo" || !reflect.DeepEqual(seen.args, []string{"/bin/echo", "hello", "world"}) || seen.dir == "" {
		t.Errorf("Confine saw path %q args %q dir %q, want the resolved program, the argv and an absolute dir", seen.path, seen.args, seen.dir)
	}
	if !startedThroughHook {
		t.Error("Run did not start the program through the start function Confine returned")
	}
	if !ownSession {
		t.Error("Run did not restore Setsid (and clear Setpgid) after Confine replaced SysProcAttr")
	}
	if releasedWhileRunning {
		t.Error("release was called before the program had been waited for")
	}
}

// A Confine error means nothing runs: the outcome is StartFailed with the
// hook's error reachable through errors.Is.
func TestConfineErrorFailsClosed(t *testing.T) {
	errUnavailable := errors.New("sandbox unavailable")
	marker := t.TempDir() + "/ran"
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv: []string{"/bin/sh", "-c", "touch " + marker},
		Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
			return nil, nil, errUnavailable
		},
	})
	if res.Outcome.Kind != subprocess.StartFailed {
		t.Fatalf("outcome = %v, want StartFailed", res.Outcome)
	}
	var se *subprocess.StartError
	if !errors.As(res.Err(), &se) || se.Op != "confine program" || !errors.Is(res.Err(), errUnavailable) {
		t.Fatalf("error = %v, want a StartError for \"confine program\" wrapping the hook's error", res.Err())
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the program ran although Confine refused (stat: %v)", err)
	}
}
