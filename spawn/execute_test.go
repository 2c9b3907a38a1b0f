//go:build unix

package spawn_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	tool := newTool(t, root, &spawn.Options{CommandEnv: []string{"BASIS_RUNTIME_VALUE=from-runtime", "LANG=C"}})

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

// Credentials and basis's own variables in basis's environment reach no
// model-written command: only the allowlist does.
func TestCommandSeesNoCredentialOrBasisVariable(t *testing.T) {
	root := t.TempDir()
	tool := newTool(t, root, &spawn.Options{Environ: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/operator", "LANG=C.UTF-8",
		"BASIS_SERVE_TOKEN=canary-1", "AWS_SECRET_ACCESS_KEY=canary-2", "GITHUB_TOKEN=canary-3",
		"DB_PASSWORD=canary-4", "SSH_AUTH_SOCK=/tmp/canary-5",
	}})
	res, err := tool.Execute(t.Context(), callOf("!env"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "canary") {
		t.Errorf("a command saw a credential or basis's own variable:\n%s", res.Text)
	}
	for _, want := range []string{"HOME=/home/operator", "LANG=C.UTF-8"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the command lacks %s:\n%s", want, res.Text)
		}
	}
}

func TestEnvironIsTheAmbientSourceAndCommandEnvWins(t *testing.T) {
	root := t.TempDir()
	tool := newTool(t, root, &spawn.Options{
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
	tool := newTool(t, root, &spawn.Options{Environ: []string{"PATH=" + os.Getenv("PATH")}})
	res, err := tool.Execute(t.Context(), callOf("!"+body))
	if err != nil {
		t.Fatal(err)
	}
	want := "stdout:\na  b|c;d|$HOME|6|*|it's|back\\slash|\nstderr:\n+"
	if res.Text != want {
		t.Errorf("result:\n%s\nwant\n%s", res.Text, want)
	}

	// On a target the body arrives byte for byte as written after the name.
	mac := &recordingExecutor{result: spawn.CommandResult{End: exited(0)}}
	tool = newTool(t, "", &spawn.Options{CommandEnv: []string{"REGION=eu"}, Targets: map[string]spawn.Executor{"mac": mac}})
	if _, err := tool.Execute(t.Context(), callOf("!@mac "+body+"  \n")); err != nil {
		t.Fatal(err)
	}
	want2 := []spawn.CommandRequest{{Body: body, Target: "mac", Dir: "", Env: []string{"REGION=eu"}, Timeout: spawn.DefaultCommandTimeout}}
	if diff := cmp.Diff(want2, mac.calls()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestFailingCommandIsAToolErrorCarryingItsOutput(t *testing.T) {
	tool := newTool(t, t.TempDir(), nil)
	res, err := tool.Execute(t.Context(), callOf(`!sh -c 'echo out; echo err >&2; exit 4'`))
	if err == nil {
		t.Fatalf("a non-zero exit succeeded: %q", res.Text)
	}
	want := "spawn: the command exited with code 4\nstdout:\nout\nstderr:\nerr"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", err, want)
	}
	var ce *spawn.CommandError
	if !errors.As(err, &ce) || ce.Output != "stdout:\nout\nstderr:\nerr" {
		t.Fatalf("error is not a *CommandError with the output: %#v", err)
	}
	if diff := cmp.Diff(spawn.CommandEnd{ExitCode: 4}, ce.End, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("end (-want +got):\n%s", diff)
	}

	_, err = tool.Execute(t.Context(), callOf("!exit 3"))
	if err == nil || err.Error() != "spawn: the command exited with code 3 and printed nothing" {
		t.Errorf("silent failure: %v", err)
	}
	_, err = tool.Execute(t.Context(), callOf("!kill -TERM $$"))
	if !errors.As(err, &ce) || ce.End.Signal != "SIGTERM" || ce.End.Success() || err.Error() != "spawn: the command was killed by signal SIGTERM and printed nothing" {
		t.Errorf("signal: %v", err)
	}
	// A host (and the runtime's audit) reads the status as for any program.
	var exit *subprocess.ExitError
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.Signaled || exit.Outcome.Signal != syscall.SIGTERM {
		t.Errorf("signal as a *subprocess.ExitError: %#v", exit)
	}
	_, err = tool.Execute(t.Context(), callOf("!exit 3"))
	if !errors.As(err, &exit) || exit.Outcome.Kind != subprocess.Exited || exit.Outcome.Code != 3 {
		t.Errorf("exit 3 as a *subprocess.ExitError: %#v", exit)
	}
}

func TestSuccessfulResultText(t *testing.T) {
	tool := newTool(t, t.TempDir(), nil)
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
	tool := newTool(t, root, nil)
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
	tool := newTool(t, t.TempDir(), nil)
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
	tool := newTool(t, t.TempDir(), &spawn.Options{CommandTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := tool.Execute(t.Context(), callOf("!echo before; sleep 30"))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
	var ce *spawn.CommandError
	if !errors.As(err, &ce) || !ce.End.TimedOut {
		t.Fatalf("error %v, want a timed-out *CommandError", err)
	}
	if want := "spawn: the command timed out after 300ms and was stopped\nbefore"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestCommandCouldNotStart(t *testing.T) {
	tool := newTool(t, filepath.Join(t.TempDir(), "gone"), nil)
	_, err := tool.Execute(t.Context(), callOf("!true"))
	var ce *spawn.CommandError
	if !errors.As(err, &ce) || ce.End.StartErr == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want could-not-start wrapping ErrNotExist", err)
	}
	if want := "spawn: the command could not start: enter working directory: no such file or directory"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestOutputStreamsToProgressAndIsCapped(t *testing.T) {
	tool := newTool(t, t.TempDir(), nil)
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
	tool := newTool(t, "", &spawn.Options{Targets: map[string]spawn.Executor{"mac": mac}})
	_, err := tool.Execute(t.Context(), callOf("!@mac xcodebuild"))
	if err == nil || err.Error() != "spawn: the command could not be run on target mac: connection refused" {
		t.Errorf("error %v", err)
	}
	mac.err = nil
	mac.result = spawn.CommandResult{Stdout: []byte("fail"), End: exited(65)}
	_, err = tool.Execute(t.Context(), callOf("!@mac xcodebuild"))
	var ce *spawn.CommandError
	if !errors.As(err, &ce) || ce.End.ExitCode != 65 || err.Error() != "spawn: the command on target mac exited with code 65\nfail" {
		t.Errorf("error %v", err)
	}
}

// A shell resolves an empty, "." or relative PATH entry against its
// working directory: the workspace, whose files a repository controls. A
// repository's own ./ls must not run where a rule allowed ls.
func TestLocalPathKeepsOnlyAbsoluteEntries(t *testing.T) {
	root := t.TempDir()
	writeScript(t, root, "ls", "touch PWNED; echo the repository ls\n")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(root, "bin"), "ls", "touch PWNED; echo the repository ls\n")
	for _, path := range []string{":/usr/bin:/bin", ".:/usr/bin:/bin", "bin:/usr/bin:/bin", "/usr/bin::/bin:"} {
		tool := newTool(t, root, &spawn.Options{Environ: []string{"PATH=" + path}})
		res, err := tool.Execute(t.Context(), callOf("!ls"))
		if err != nil {
			t.Fatalf("PATH=%q: %v", path, err)
		}
		if strings.Contains(res.Text, "repository ls") {
			t.Errorf("PATH=%q ran the repository's ls", path)
		}
		if _, err := os.Stat(filepath.Join(root, "PWNED")); err == nil {
			t.Fatalf("PATH=%q: the repository's ls ran", path)
		}
		if want := "bin\nls"; res.Text != want {
			t.Errorf("PATH=%q: the real ls printed %q, want %q", path, res.Text, want)
		}
	}

	tests := []struct {
		name       string
		environ    []string
		commandEnv []string
		want       string
	}{
		{"leading empty entry", []string{"PATH=:/usr/bin:/bin"}, nil, "/usr/bin:/bin"},
		{"dot and relative entries", []string{"PATH=.:bin:/usr/bin:./x:/bin:../y"}, nil, "/usr/bin:/bin"},
		{"trailing and doubled colons", []string{"PATH=/usr/bin::/bin:"}, nil, "/usr/bin:/bin"},
		{"only relative entries", []string{"PATH=.:bin"}, nil, spawn.DefaultPath},
		{"empty", []string{"PATH="}, nil, spawn.DefaultPath},
		{"unset: no shell's built-in PATH", []string{"HOME=/h"}, nil, spawn.DefaultPath},
		{"the runtime's PATH is cut too", []string{"PATH=/usr/bin"}, []string{"PATH=tools:/opt/bin:"}, "/opt/bin"},
	}
	for _, tt := range tests {
		tool := newTool(t, root, &spawn.Options{Environ: tt.environ, CommandEnv: tt.commandEnv})
		res, err := tool.Execute(t.Context(), callOf(`!echo "$PATH"`))
		if err != nil || res.Text != tt.want {
			t.Errorf("%s: PATH %q, %v; want %q", tt.name, res.Text, err, tt.want)
		}
	}
}

// What a host executor reports is spawn's own CommandEnd: any value it
// builds, however incomplete, reads as words and never as a panic.
func TestTargetResultsOfEveryKind(t *testing.T) {
	unreachable := errors.New("xcodebuild: no such file")
	tests := []struct {
		name    string
		end     spawn.CommandEnd
		output  string
		success bool
		text    string
	}{
		{"zero value is a silent success", spawn.CommandEnd{}, "", true, ""},
		{"exit code", spawn.CommandEnd{ExitCode: 2}, "", false, "spawn: the command on target mac exited with code 2 and printed nothing"},
		{"signal", spawn.CommandEnd{Signal: "SIGKILL", ExitCode: 0}, "partial", false, "spawn: the command on target mac was killed by signal SIGKILL\npartial"},
		{"timed out, with the signal that stopped it", spawn.CommandEnd{TimedOut: true, Signal: "SIGTERM"}, "", false, "spawn: the command on target mac timed out after 10m0s and was stopped"},
		{"cancelled", spawn.CommandEnd{Canceled: true}, "", false, "spawn: the command on target mac was cancelled and stopped"},
		{"could not start", spawn.CommandEnd{StartErr: unreachable, ExitCode: 127}, "", false, "spawn: the command on target mac could not start: xcodebuild: no such file"},
	}
	for _, tt := range tests {
		mac := &recordingExecutor{result: spawn.CommandResult{Stdout: []byte(tt.output), End: tt.end}}
		tool := newTool(t, "", &spawn.Options{Targets: map[string]spawn.Executor{"mac": mac}})
		res, err := tool.Execute(t.Context(), callOf("!@mac xcodebuild"))
		if tt.end.Success() != tt.success {
			t.Errorf("%s: Success() = %v", tt.name, !tt.success)
		}
		if tt.success {
			if err != nil || res.Text != "the command finished and printed nothing" {
				t.Errorf("%s: %q, %v", tt.name, res.Text, err)
			}
			continue
		}
		var ce *spawn.CommandError
		if !errors.As(err, &ce) || err.Error() != tt.text {
			t.Errorf("%s: error %q, want %q", tt.name, err, tt.text)
			continue
		}
		if diff := cmp.Diff(tt.end, ce.End, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("%s: end (-want +got):\n%s", tt.name, diff)
		}
		if errors.Is(err, unreachable) != (tt.end.StartErr != nil) {
			t.Errorf("%s: errors.Is(err, the start error) = %v", tt.name, !(tt.end.StartErr != nil))
		}
	}
}
