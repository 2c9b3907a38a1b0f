//go:build unix

package subprocess_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// run runs c and fails the test on a Cmd error.
func run(t *testing.T, ctx context.Context, c *subprocess.Cmd) *subprocess.Result {
	t.Helper()
	res, err := subprocess.Run(ctx, c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func sh(script string, args ...string) []string {
	return append([]string{"/bin/sh", "-c", script}, args...)
}

func hostEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

func TestPayloadArrivesIntact(t *testing.T) {
	payload := make([]byte, 8<<20)
	rand.Read(payload)
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:        []string{"cat"},
		Env:         hostEnv(),
		Stdin:       payload,
		StdoutLimit: 16 << 20,
		Timeout:     30 * time.Second,
	})
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v", res.Outcome)
	}
	if !bytes.Equal(res.Stdout, payload) || res.StdoutTruncated {
		t.Fatalf("stdout is %d bytes (truncated %v), want the 8 MiB payload back unchanged", len(res.Stdout), res.StdoutTruncated)
	}
}

func TestChildThatNeverReadsStdinSucceeds(t *testing.T) {
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    sh("echo done"),
		Stdin:   bytes.Repeat([]byte("x"), 1<<20),
		Timeout: 10 * time.Second,
	})
	if !res.Outcome.Success() || string(res.Stdout) != "done\n" {
		t.Fatalf("outcome = %v, stdout = %q", res.Outcome, res.Stdout)
	}
}

func TestChildThatNeverReadsNorExitsIsKilledAtDeadline(t *testing.T) {
	start := time.Now()
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    []string{"/bin/sleep", "30"},
		Stdin:   bytes.Repeat([]byte("x"), 1<<20),
		Timeout: 300 * time.Millisecond,
		Grace:   100 * time.Millisecond,
	})
	if res.Outcome.Kind != subprocess.TimedOut {
		t.Fatalf("outcome = %v, want timed out", res.Outcome)
	}
	if res.Outcome.Signal != syscall.SIGTERM {
		t.Errorf("stopping signal = %v, want SIGTERM (sleep does not trap it)", res.Outcome.Signal)
	}
	// Deadline + grace + drain window, with room for a loaded machine; the
	// point is that it is nowhere near the 30 s the program wanted.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v", d)
	}
}

func TestBackgroundGrandchildDiesWithTheCall(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    sh(`sleep 30 & echo $! > "$1"; echo ok`, "sh", pidFile),
		Env:     hostEnv(),
		Timeout: 300 * time.Millisecond,
	})
	switch {
	case res.Outcome.Success() && string(res.Stdout) == "ok\n":
	case res.Outcome.Kind == subprocess.TimedOut:
	default:
		t.Fatalf("outcome = %v, stdout %q; want ok or timed out", res.Outcome, res.Stdout)
	}
	if d := time.Since(start); d > 1300*time.Millisecond {
		t.Errorf("returned after %v, want within deadline + 1 s", d)
	}
	waitDead(t, readPID(t, pidFile))
}

// Without ReapOrphans (with it, the sweep kills the grandchild before the
// output is read), a grandchild that escaped the group and holds the
// pipes does not hold the call open.
func TestEscapedGrandchildDoesNotHoldTheCallOpen(t *testing.T) {
	if !inChild(t) {
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res := run(t, t.Context(), &subprocess.Cmd{
		// setsid leaves the process group, so the group kill cannot reach
		// it; it keeps stdout and stderr open.
		Argv:    sh(`setsid sleep 5 & echo $! > "$1"; echo hi`, "sh", pidFile),
		Env:     hostEnv(),
		Timeout: 10 * time.Second,
	})
	elapsed := time.Since(start)
	t.Cleanup(func() { syscall.Kill(readPID(t, pidFile), syscall.SIGKILL) })
	if !res.Outcome.Success() || string(res.Stdout) != "hi\n" {
		t.Fatalf("outcome = %v, stdout %q", res.Outcome, res.Stdout)
	}
	if elapsed > 3*time.Second {
		t.Errorf("returned after %v although the program exited at once", elapsed)
	}
}

func TestTermIgnoringChildIsKilledAfterGrace(t *testing.T) {
	start := time.Now()
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    sh(`trap '' TERM; while :; do sleep 0.05; done`),
		Env:     hostEnv(),
		Timeout: 200 * time.Millisecond,
		Grace:   300 * time.Millisecond,
	})
	elapsed := time.Since(start)
	if res.Outcome.Kind != subprocess.TimedOut || res.Outcome.Signal != syscall.SIGKILL {
		t.Fatalf("outcome = %+v, want timed out and ended by SIGKILL", res.Outcome)
	}
	if elapsed < 500*time.Millisecond {
		t.Errorf("returned after %v, before deadline + grace", elapsed)
	}
	if elapsed > 5*time.Second {
		t.Errorf("returned after %v", elapsed)
	}
}

func TestEndlessOutputIsTruncatedAndStopped(t *testing.T) {
	for _, argv := range [][]string{
		{"yes"},
		{"head", "-c", "209715200", "/dev/zero"},
	} {
		t.Run(argv[len(argv)-1], func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			res := run(t, t.Context(), &subprocess.Cmd{Argv: argv, Env: hostEnv(), Timeout: 30 * time.Second})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if !res.StdoutTruncated || len(res.Stdout) != subprocess.DefaultStdoutLimit {
				t.Errorf("stdout %d bytes, truncated %v; want the 1 MiB limit, truncated", len(res.Stdout), res.StdoutTruncated)
			}
			if res.Outcome.Kind != subprocess.Signaled || res.Outcome.Signal != syscall.SIGPIPE {
				t.Errorf("outcome = %v, want killed by SIGPIPE once the pipe closed", res.Outcome)
			}
			// Everything allocated during the run, garbage included, bounds
			// the peak heap growth from above.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("allocated %d MiB for 200 MiB of output, want under 16 MiB", grew>>20)
			}
			// Not a speed test: without the pipe closed, yes would run until the
			// 30 s deadline.
			if elapsed > 10*time.Second {
				t.Errorf("returned after %v", elapsed)
			}
		})
	}
}

func TestKeepRunningPastLimit(t *testing.T) {
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:                 sh("head -c 3000000 /dev/zero; echo finished >&2"),
		Env:                  hostEnv(),
		StdoutLimit:          1000,
		KeepRunningPastLimit: true,
		Timeout:              30 * time.Second,
	})
	if !res.Outcome.Success() || !res.StdoutTruncated || len(res.Stdout) != 1000 || string(res.Stderr) != "finished\n" {
		t.Fatalf("outcome %v, stdout %d bytes (truncated %v), stderr %q", res.Outcome, len(res.Stdout), res.StdoutTruncated, res.Stderr)
	}
}

func TestStderrFloodIsCappedSeparately(t *testing.T) {
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:    sh("head -c 10000000 /dev/zero >&2; echo kept"),
		Env:     hostEnv(),
		Timeout: 30 * time.Second,
	})
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v; a stderr flood must not kill the program", res.Outcome)
	}
	if string(res.Stdout) != "kept\n" || res.StdoutTruncated {
		t.Errorf("stdout = %q, truncated %v", res.Stdout, res.StdoutTruncated)
	}
	if !res.StderrTruncated || len(res.Stderr) != subprocess.DefaultStderrLimit {
		t.Errorf("stderr %d bytes, truncated %v; want %d, truncated", len(res.Stderr), res.StderrTruncated, subprocess.DefaultStderrLimit)
	}
}

func TestOutcomes(t *testing.T) {
	tests := []struct {
		script string
		want   subprocess.Outcome
		text   string
	}{
		{"exit 0", subprocess.Outcome{Kind: subprocess.Exited, Code: 0}, "exited with code 0"},
		{"exit 3", subprocess.Outcome{Kind: subprocess.Exited, Code: 3}, "exited with code 3"},
		{"kill -SEGV $$", subprocess.Outcome{Kind: subprocess.Signaled, Signal: syscall.SIGSEGV}, "killed by signal SIGSEGV"},
		{"kill -KILL $$", subprocess.Outcome{Kind: subprocess.Signaled, Signal: syscall.SIGKILL}, "killed by signal SIGKILL"},
	}
	for _, tt := range tests {
		res := run(t, t.Context(), &subprocess.Cmd{Argv: sh(tt.script), Timeout: 10 * time.Second})
		if !reflect.DeepEqual(res.Outcome, tt.want) {
			t.Errorf("%s: outcome = %+v, want %+v", tt.script, res.Outcome, tt.want)
		}
		if got := res.Outcome.String(); got != tt.text {
			t.Errorf("%s: String() = %q, want %q", tt.script, got, tt.text)
		}
		err := res.Err()
		if tt.want.Success() != (err == nil) {
			t.Errorf("%s: Err() = %v", tt.script, err)
		}
		var ee *subprocess.ExitError
		if err != nil && (!errors.As(err, &ee) || ee.Outcome != tt.want) {
			t.Errorf("%s: Err() = %#v, want an *ExitError with the outcome", tt.script, err)
		}
	}
}

func TestCouldNotStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("noexec", "#!/bin/sh\necho hi\n", 0o644)
	write("badshebang", "#!/no/such/interpreter-SECRET\necho hi\n", 0o755)
	write("garbage", "\x7fELFnot really", 0o755)

	tests := []struct {
		name string
		cmd  subprocess.Cmd
		op   string
		is   error
	}{
		{"bare name not in PATH", subprocess.Cmd{Argv: []string{"no-such-program-SECRET"}, Env: []string{"PATH=" + dir}}, "look up program", subprocess.ErrNotFound},
		{"missing path", subprocess.Cmd{Argv: []string{"./missing-SECRET"}, Root: dir}, "start program", fs.ErrNotExist},
		{"no exec bit", subprocess.Cmd{Argv: []string{"./noexec"}, Root: dir}, "start program", fs.ErrPermission},
		{"no exec bit found in PATH", subprocess.Cmd{Argv: []string{"noexec"}, Env: []string{"PATH=" + dir}}, "look up program", fs.ErrPermission},
		{"bad interpreter", subprocess.Cmd{Argv: []string{"./badshebang"}, Root: dir}, "start program", subprocess.ErrBadInterpreter},
		{"not an executable format", subprocess.Cmd{Argv: []string{"./garbage"}, Root: dir}, "start program", syscall.ENOEXEC},
		{"missing working directory", subprocess.Cmd{Argv: []string{"/bin/true"}, Root: dir, Dir: "gone-SECRET"}, "enter working directory", fs.ErrNotExist},
		{"working directory is a file", subprocess.Cmd{Argv: []string{"/bin/true"}, Root: dir, Dir: "noexec"}, "enter working directory", syscall.ENOTDIR},
	}
	fdsBefore := openFDs(t)
	for _, tt := range tests {
		res := run(t, t.Context(), &tt.cmd)
		o := res.Outcome
		var se *subprocess.StartError
		if o.Kind != subprocess.StartFailed || !errors.As(o.Err, &se) {
			t.Errorf("%s: outcome = %+v, want could-not-start with a *StartError", tt.name, o)
			continue
		}
		if se.Op != tt.op || !errors.Is(o.Err, tt.is) {
			t.Errorf("%s: %q: op %q, want %q wrapping %v", tt.name, o.Err, se.Op, tt.op, tt.is)
		}
		if text := o.String(); !strings.HasPrefix(text, "could not start: ") || strings.Contains(text, "SECRET") || strings.Contains(text, dir) {
			t.Errorf("%s: %q must say could not start and quote no path", tt.name, text)
		}
		if !errors.Is(res.Err(), tt.is) {
			t.Errorf("%s: Err() = %v does not wrap the reason", tt.name, res.Err())
		}
	}
	if after := openFDs(t); after != fdsBefore {
		t.Errorf("open descriptors went from %d to %d", fdsBefore, after)
	}
}

func TestCancelStopsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	res := run(t, ctx, &subprocess.Cmd{
		Argv:  sh(`sleep 30 & echo $! > "$1"; wait`, "sh", pidFile),
		Env:   hostEnv(),
		Grace: 200 * time.Millisecond,
	})
	if res.Outcome.Kind != subprocess.Canceled {
		t.Fatalf("outcome = %v, want cancelled", res.Outcome)
	}
	waitDead(t, readPID(t, pidFile))

	// A deadline on the caller's context is a timeout, not a cancellation.
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	res = run(t, ctx, &subprocess.Cmd{Argv: []string{"/bin/sleep", "30"}, Grace: 100 * time.Millisecond})
	if res.Outcome.Kind != subprocess.TimedOut {
		t.Fatalf("outcome = %v, want timed out", res.Outcome)
	}
}

func TestDoneContextStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := run(t, ctx, &subprocess.Cmd{Argv: []string{"/usr/bin/touch", marker}})
	if res.Outcome.Kind != subprocess.Canceled {
		t.Errorf("outcome = %v, want cancelled", res.Outcome)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran although the context was already done")
	}
}

func TestEnvironmentIsExactlyWhatWasPassed(t *testing.T) {
	t.Setenv("BASIS_TEST_CANARY", "ambient-canary")
	dir := t.TempDir()
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv: []string{"/usr/bin/env"},
		Root: dir,
		Dir:  ".",
		Env:  []string{"A=1", "B=2", "A=3", "EMPTY="},
	})
	if got, want := string(res.Stdout), "A=3\nB=2\nEMPTY=\n"; got != want {
		t.Errorf("child environment =\n%s\nwant\n%s", got, want)
	}
	res = run(t, t.Context(), &subprocess.Cmd{Argv: []string{"/usr/bin/env"}})
	if len(res.Stdout) != 0 {
		t.Errorf("a nil Env gave the child %q, want nothing", res.Stdout)
	}
}

func TestInvalidCmdErrorsQuoteNoValue(t *testing.T) {
	tests := []struct {
		name string
		cmd  subprocess.Cmd
		says string
	}{
		{"NUL in env", subprocess.Cmd{Argv: []string{"/bin/true"}, Env: []string{"OK=1", "TOKEN=sec\x00ret-SECRET"}}, "environment entry 1 contains a NUL byte"},
		{"entry without =", subprocess.Cmd{Argv: []string{"/bin/true"}, Env: []string{"SECRET"}}, "environment entry 0 is not of the form"},
		{"NUL in argument", subprocess.Cmd{Argv: []string{"/bin/echo", "x\x00SECRET"}}, "argument 1 contains a NUL byte"},
		{"no argv", subprocess.Cmd{}, "Argv is empty"},
		{"blank program", subprocess.Cmd{Argv: []string{"  "}}, "Argv is empty"},
		{"negative timeout", subprocess.Cmd{Argv: []string{"/bin/true"}, Timeout: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		res, err := subprocess.Run(t.Context(), &tt.cmd)
		if res != nil || !errors.Is(err, subprocess.ErrInvalidCmd) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Run = %v, %v; want ErrInvalidCmd saying %q", tt.name, res, err, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error %q quotes a value", tt.name, err)
		}
	}
}

func TestMergeEnv(t *testing.T) {
	got := subprocess.MergeEnv(
		[]string{"PATH=/bin", "HOME=/h", "TOKEN=outer"},
		nil,
		[]string{"TOKEN=runtime", "REGION=eu"},
		[]string{"TOKEN=manifest", "HOME=/h2", "HOME=/h3"},
	)
	want := []string{"PATH=/bin", "HOME=/h3", "TOKEN=manifest", "REGION=eu"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeEnv = %q, want %q", got, want)
	}
	if v, ok := subprocess.LookupEnv(want, "TOKEN"); !ok || v != "manifest" {
		t.Errorf("LookupEnv = %q, %v", v, ok)
	}
	if _, ok := subprocess.LookupEnv(want, "MISSING"); ok {
		t.Error("LookupEnv found a missing name")
	}
}

func TestProgramResolution(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.MkdirAll(filepath.Join(root, "tools"), 0o755)
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(filepath.Join(root, "work"), 0o755)
	script := "#!/bin/sh\necho \"$0 in $(pwd)\"\n"
	os.WriteFile(filepath.Join(root, "tools", "x"), []byte(script), 0o755)
	os.WriteFile(filepath.Join(bin, "only-in-child-path"), []byte(script), 0o755)

	// The test's own working directory is elsewhere: resolution must not
	// depend on it.
	t.Chdir(t.TempDir())

	res := run(t, t.Context(), &subprocess.Cmd{Argv: []string{"./tools/x"}, Root: root, Dir: "work"})
	if got, want := string(res.Stdout), filepath.Join(root, "tools", "x")+" in "+filepath.Join(root, "work")+"\n"; got != want {
		t.Errorf("relative program: %q, want %q (outcome %v)", got, want, res.Outcome)
	}
	res = run(t, t.Context(), &subprocess.Cmd{Argv: []string{"only-in-child-path"}, Root: root, Env: []string{"PATH=/nonexistent:relative:" + bin}})
	if !res.Outcome.Success() || !strings.HasSuffix(string(res.Stdout), " in "+root+"\n") {
		t.Errorf("bare name in the child's PATH: %v %q", res.Outcome, res.Stdout)
	}
	res = run(t, t.Context(), &subprocess.Cmd{Argv: []string{"only-in-child-path"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if !errors.Is(res.Outcome.Err, subprocess.ErrNotFound) {
		t.Errorf("bare name absent from the child's PATH: %v", res.Outcome)
	}
}

func TestLinesStreamAsTheyArrive(t *testing.T) {
	var mu sync.Mutex
	var outLines, errLines []string
	long := strings.Repeat("y", 20000)
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv:         sh(`echo one; echo err1 >&2; printf 'two\r\nthree'; echo ` + long + ` >&2`),
		Timeout:      10 * time.Second,
		OnStdoutLine: func(l string) { mu.Lock(); outLines = append(outLines, l); mu.Unlock() },
		OnStderrLine: func(l string) { mu.Lock(); errLines = append(errLines, l); mu.Unlock() },
	})
	if !res.Outcome.Success() {
		t.Fatal(res.Outcome)
	}
	if want := []string{"one", "two", "three"}; !reflect.DeepEqual(outLines, want) {
		t.Errorf("stdout lines = %q, want %q", outLines, want)
	}
	if len(errLines) != 4 || errLines[0] != "err1" || strings.Join(errLines[1:], "") != long {
		t.Errorf("stderr lines: %d lines, want err1 then the long line in 8 KiB pieces", len(errLines))
	}
}

func TestNothingOutlivesACall(t *testing.T) {
	if testing.Short() {
		t.Skip("500 runs")
	}
	// Warm up once so lazily started runtime goroutines are in the baseline.
	run(t, t.Context(), &subprocess.Cmd{Argv: []string{"/bin/true"}})
	baseGoroutines := runtime.NumGoroutine()
	baseFDs := openFDs(t)

	one := func() error {
		res, err := subprocess.Run(t.Context(), &subprocess.Cmd{
			Argv:    sh("cat; echo err >&2; sleep 30 &"),
			Stdin:   []byte("payload"),
			Timeout: 10 * time.Second,
		})
		if err != nil {
			return err
		}
		if !res.Outcome.Success() || string(res.Stdout) != "payload" {
			return errors.New(res.Outcome.String())
		}
		return nil
	}
	for i := 0; i < 500; i++ {
		if err := one(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- one() }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent run: %v", err)
		}
	}

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseGoroutines {
		t.Errorf("goroutines: %d after, %d before", n, baseGoroutines)
	}
	if n := openFDs(t); n != baseFDs {
		t.Errorf("open descriptors: %d after, %d before", n, baseFDs)
	}
	if z := zombieChildren(t); len(z) > 0 {
		t.Errorf("zombie children: %v", z)
	}
}

// readPID reads a pid a test script wrote.
func readPID(t *testing.T, file string) int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the script wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitDead waits briefly for pid to be gone or a zombie awaiting its new
// parent (init reaps orphans on its own schedule).
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		state, err := procState(pid)
		if err != nil || state == "Z" || state == "X" {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still alive (state %s)", pid, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procState returns the state letter of pid and its parent pid.
func procState(pid int) (string, error) {
	state, _, err := procStat(pid)
	return state, err
}

func procStat(pid int) (state string, ppid int, err error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name is in parentheses and may contain spaces.
	rest := string(raw[bytes.LastIndexByte(raw, ')')+2:])
	fields := strings.Fields(rest)
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0], ppid, nil
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func zombieChildren(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var zombies []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, err := procStat(pid); err == nil && ppid == os.Getpid() && state == "Z" {
			zombies = append(zombies, pid)
		}
	}
	return zombies
}

// An Outcome or error a caller built by hand, with fields missing, must
// still describe itself: these texts are built where a panic would take
// the whole process down.
func TestOutcomeTextIsTotal(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"start failed without a reason", &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.StartFailed}}, "could not start"},
		{"start failed with a reason", &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.StartFailed, Err: &subprocess.StartError{Op: "start program", Err: syscall.ENOENT}}}, "could not start: start program: no such file or directory"},
		{"start error without a reason", &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.StartFailed, Err: &subprocess.StartError{Op: "look up program"}}}, "could not start: look up program failed"},
		{"zero outcome", &subprocess.ExitError{}, "ended in an unknown way (unknown)"},
		{"kind out of range", &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: "vanished"}}, "ended in an unknown way (vanished)"},
		{"unnamed signal", &subprocess.ExitError{Outcome: subprocess.Outcome{Kind: subprocess.Signaled, Signal: 77}}, "killed by signal 77"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: Error() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
