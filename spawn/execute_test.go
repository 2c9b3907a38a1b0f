package spawn_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
	"github.com/basis-go/basis/subprocess"
)

// envNames returns the variable names in env's output, sorted.
func envNames(output string) []string {
	var names []string
	for _, line := range strings.Split(output, "\n") {
		if name, _, ok := strings.Cut(line, "="); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestModelWrittenCommandSeesOnlyTheAllowlist(t *testing.T) {
	t.Setenv("BASIS_SPAWN_TEST_CANARY", "canary-secret-value")
	t.Setenv("HOME", "/home/tester")
	t.Setenv("LANG", "C.UTF-8")
	root := t.TempDir()
	tool := newTool(t, spawn.Config{Root: root, CommandEnv: []string{"BASIS_RUNTIME_VALUE=from-runtime", "LANG=C"}})

	res, err := tool.Execute(t.Context(), callOf("!env"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "BASIS_SPAWN_TEST_CANARY") || strings.Contains(res.Text, "canary-secret-value") {
		t.Errorf("the command saw the parent's canary:\n%s", res.Text)
	}
	for _, want := range []string{"BASIS_RUNTIME_VALUE=from-runtime", "HOME=/home/tester", "LANG=C\n", "PATH=" + os.Getenv("PATH")} {
		if !strings.Contains(res.Text+"\n", want) {
			t.Errorf("the command's environment lacks %q:\n%s", want, res.Text)
		}
	}
	allowed := []string{"BASIS_RUNTIME_VALUE", "HOME", "LANG", "LC_ALL", "PATH", "PWD", "SHELL", "TERM", "TMPDIR", "USER"}
	for _, name := range envNames(res.Text) {
		if !slices.Contains(allowed, name) {
			t.Errorf("the command saw %s, which is neither allowlisted nor set by the runtime", name)
		}
	}
}

func TestEnvironIsTheAmbientSourceAndCommandEnvWins(t *testing.T) {
	root := t.TempDir()
	tool := newTool(t, spawn.Config{
		Root:       root,
		Environ:    []string{"PATH=/usr/bin:/bin", "HOME=/ambient", "USER=amb", "AWS_SECRET_ACCESS_KEY=x", "TERM=dumb", "HOME=/ambient-later"},
		CommandEnv: []string{"USER=runtime", "GOFLAGS=-mod=mod"},
	})
	res, err := tool.Execute(t.Context(), callOf("!/usr/bin/env"))
	if err != nil {
		t.Fatal(err)
	}
	// The shell adds PWD and lists the variables in its own order.
	want := []string{"GOFLAGS=-mod=mod", "HOME=/ambient-later", "PATH=/usr/bin:/bin", "PWD=" + root, "TERM=dumb", "USER=runtime"}
	got := strings.Split(res.Text, "\n")
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

func TestShellMetacharactersReachShUnchanged(t *testing.T) {
	root := t.TempDir()
	body := `x='*'; printf '%s|' "a  b" 'c;d' \$HOME "$((2*3))" "$x" 'it'"'"'s' "back\\slash" && echo; echo "$x" | tr '*' '+' >&2; true || echo never`
	tool := newTool(t, spawn.Config{Root: root, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	res, err := tool.Execute(t.Context(), callOf("!"+body))
	if err != nil {
		t.Fatal(err)
	}
	want := "stdout:\na  b|c;d|$HOME|6|*|it's|back\\slash|\nstderr:\n+"
	if res.Text != want {
		t.Errorf("result:\n%s\nwant\n%s", res.Text, want)
	}

	// On a target the body arrives byte for byte as written after the name.
	mac := &recordingExecutor{result: spawn.CommandResult{Outcome: exited(0)}}
	tool = newTool(t, spawn.Config{CommandEnv: []string{"REGION=eu"}}, spawn.WithTarget("mac", mac))
	if _, err := tool.Execute(t.Context(), callOf("!@mac "+body+"  \n")); err != nil {
		t.Fatal(err)
	}
	want2 := []spawn.CommandRequest{{Body: body, Target: "mac", Dir: "", Env: []string{"REGION=eu"}, Timeout: spawn.DefaultCommandTimeout}}
	if diff := cmp.Diff(want2, mac.calls()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestFailingCommandIsAToolErrorCarryingItsOutput(t *testing.T) {
	tool := newTool(t, spawn.Config{Root: t.TempDir()})
	res, err := tool.Execute(t.Context(), callOf(`!sh -c 'echo out; echo err >&2; exit 4'`))
	if err == nil {
		t.Fatalf("a non-zero exit succeeded: %q", res.Text)
	}
	want := "spawn: the command exited with code 4\nstdout:\nout\nstderr:\nerr"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", err, want)
	}
	var exit *subprocess.ExitError
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.Exited || exit.Outcome.Code != 4 {
		t.Errorf("error does not wrap an *ExitError with code 4: %#v", err)
	}
	var ce *spawn.CommandError
	if !errors.As(err, &ce) || ce.Output != "stdout:\nout\nstderr:\nerr" {
		t.Errorf("error is not a *CommandError with the output: %#v", err)
	}

	_, err = tool.Execute(t.Context(), callOf("!exit 3"))
	if err == nil || err.Error() != "spawn: the command exited with code 3 and printed nothing" {
		t.Errorf("silent failure: %v", err)
	}
	_, err = tool.Execute(t.Context(), callOf("!kill -TERM $$"))
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.Signaled || !strings.Contains(err.Error(), "killed by signal SIGTERM") {
		t.Errorf("signal: %v", err)
	}
}

func TestSuccessfulResultText(t *testing.T) {
	tool := newTool(t, spawn.Config{Root: t.TempDir()})
	tests := []struct{ body, want string }{
		{"echo only-out", "only-out"},
		{"echo only-err >&2", "only-err"},
		{"echo out; echo err >&2", "stdout:\nout\nstderr:\nerr"},
		{"printf 'a\\n\\nb\\n\\n\\n'", "a\n\nb"},
		{"true", "the command finished and printed nothing"},
	}
	for _, tt := range tests {
		res, err := tool.Execute(t.Context(), callOf("!"+tt.body))
		if err != nil || res.Text != tt.want || res.Truncated {
			t.Errorf("%q: %q (truncated %v), %v; want %q", tt.body, res.Text, res.Truncated, err, tt.want)
		}
	}
}

func TestCommandRunsInTheWorkspaceRoot(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "marker"), []byte("here"), 0o644)
	t.Chdir(t.TempDir()) // the process's own directory is elsewhere
	tool := newTool(t, spawn.Config{Root: root})
	res, err := tool.Execute(t.Context(), callOf("!pwd; cat marker"))
	if err != nil {
		t.Fatal(err)
	}
	if want := root + "\nhere"; res.Text != want {
		t.Errorf("result %q, want %q", res.Text, want)
	}
}

func TestBackgroundedSleepReturnsPromptlyAndLeavesNoProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool := newTool(t, spawn.Config{Root: t.TempDir()})
	start := time.Now()
	res, err := tool.Execute(t.Context(), callOf("!sleep 30 & echo $! > "+pidFile+"; echo started"))
	elapsed := time.Since(start)
	if err != nil || res.Text != "started" {
		t.Fatalf("result %q, %v", res.Text, err)
	}
	// Nowhere near the 30 s the background job wanted.
	if elapsed > 10*time.Second {
		t.Errorf("returned after %v", elapsed)
	}
	pid := readPID(t, pidFile)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the backgrounded sleep (pid %d) outlived the call", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCommandTimeout(t *testing.T) {
	tool := newTool(t, spawn.Config{Root: t.TempDir(), CommandTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := tool.Execute(t.Context(), callOf("!echo before; sleep 30"))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
	var exit *subprocess.ExitError
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.TimedOut {
		t.Fatalf("error %v, want a timed-out *ExitError", err)
	}
	if want := "spawn: the command timed out after 300ms and was stopped\nbefore"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestCommandCouldNotStart(t *testing.T) {
	tool := newTool(t, spawn.Config{Root: filepath.Join(t.TempDir(), "gone")})
	_, err := tool.Execute(t.Context(), callOf("!true"))
	var exit *subprocess.ExitError
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.StartFailed || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want could-not-start wrapping ErrNotExist", err)
	}
	if want := "spawn: the command could not start: enter working directory: no such file or directory"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestOutputStreamsToProgressAndIsCapped(t *testing.T) {
	tool := newTool(t, spawn.Config{Root: t.TempDir()})
	var progress lines
	ctx := contract.WithProgress(t.Context(), progress.add)
	res, err := tool.Execute(ctx, callOf("!echo one; echo two >&2; echo three"))
	if err != nil {
		t.Fatal(err)
	}
	got := progress.get()
	slices.Sort(got) // stdout and stderr lines interleave in no fixed order
	if diff := cmp.Diff([]string{"one", "three", "two"}, got); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	if res.Text != "stdout:\none\nthree\nstderr:\ntwo" {
		t.Errorf("result %q", res.Text)
	}

	// Past the stdout limit the build keeps running to its end.
	res, err = tool.Execute(t.Context(), callOf("!head -c 3000000 /dev/zero | tr '\\0' x; echo finished >&2"))
	if err != nil {
		t.Fatalf("a verbose command failed: %v", err)
	}
	if !res.Truncated || !strings.HasSuffix(res.Text, "[stdout truncated: only the first 1048576 bytes were kept]\nstderr:\nfinished") {
		t.Errorf("truncated %v, result ends %q", res.Truncated, res.Text[max(0, len(res.Text)-120):])
	}
}

func TestExecutorFailureIsAToolError(t *testing.T) {
	mac := &recordingExecutor{err: errors.New("connection refused")}
	tool := newTool(t, spawn.Config{}, spawn.WithTarget("mac", mac))
	_, err := tool.Execute(t.Context(), callOf("!@mac xcodebuild"))
	if err == nil || err.Error() != "spawn: the command could not be run on target mac: connection refused" {
		t.Errorf("error %v", err)
	}
	mac.err = nil
	mac.result = spawn.CommandResult{Stdout: []byte("fail"), Outcome: exited(65)}
	_, err = tool.Execute(t.Context(), callOf("!@mac xcodebuild"))
	var exit *subprocess.ExitError
	if !errors.As(err, &exit) || exit.Outcome.Code != 65 || err.Error() != "spawn: the command on target mac exited with code 65\nfail" {
		t.Errorf("error %v", err)
	}
}
