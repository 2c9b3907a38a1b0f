package declared_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// scriptTool declares one tool "t" running the script body at
// .basis/tools/t, with extra fields merged in, and loads it.
func scriptTool(t *testing.T, body string, extra map[string]any, cfg declared.Config) (*declared.Tool, string) {
	t.Helper()
	tool := map[string]any{
		"description":  "test tool",
		"input_schema": map[string]any{"type": "object"},
		"command":      []string{"./.basis/tools/t"},
	}
	for k, v := range extra {
		tool[k] = v
	}
	root := workspace(t, manifestOf(t, map[string]any{"t": tool}))
	if body != "" {
		script(t, root, ".basis/tools/t", body)
	}
	cfg.Root = root
	if cfg.Environ == nil {
		cfg.Environ = pathEnv()
	}
	return loadTool(t, &cfg, "t"), root
}

// A value a shell would mangle reaches the program byte for byte, and
// nothing in it is executed.
func TestStdinIsTheInputExactly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin")
	tool, root := scriptTool(t, `cat > "$OUT"; echo done`,
		map[string]any{"env": map[string]string{"OUT": "${OUT_FILE}"}},
		declared.Config{Environ: append(pathEnv(), "OUT_FILE="+out)})
	t.Chdir(root)
	// Raw whitespace between members and numbers as written must survive
	// too: the input is not re-encoded.
	input := `{"q": "$(touch pwned1) ` + "`touch pwned2`" + ` 'single' \"double\" ; touch pwned3 && rm -rf / | x > y\n\ttab ${HOME} ünïcode ✓ \u0000 \\",` +
		"\n\t" + `"n": [1, 2.50, -0e3], "nested": {"z": null}}`
	res, err := tool.Execute(t.Context(), callWith(input))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" {
		t.Errorf("result = %q", res.Text)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(input, string(got)); diff != "" {
		t.Errorf("stdin differs from the input (-want +got):\n%s", diff)
	}
	for _, name := range []string{"pwned1", "pwned2", "pwned3"} {
		if fileExists(filepath.Join(root, name)) {
			t.Errorf("%s exists: something in the input was executed", name)
		}
	}
}

// The environment is inherited, then the runtime's command environment,
// then the manifest's env; later wins.
func TestEnvironmentLayers(t *testing.T) {
	tool, _ := scriptTool(t, `printf '%s|%s|%s|%s|%s' "$ONLY_INHERITED" "$INHERITED_AND_COMMAND" "$ALL_THREE" "$ONLY_MANIFEST" "${PATH:+has-path}"`,
		map[string]any{"env": map[string]string{"ALL_THREE": "manifest", "ONLY_MANIFEST": "manifest-${ONLY_INHERITED}"}},
		declared.Config{
			Environ:    append(pathEnv(), "ONLY_INHERITED=inherited", "INHERITED_AND_COMMAND=inherited", "ALL_THREE=inherited"),
			CommandEnv: []string{"INHERITED_AND_COMMAND=command", "ALL_THREE=command"},
		})
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "inherited|command|manifest|manifest-inherited|has-path"; res.Text != want {
		t.Errorf("environment = %q, want %q", res.Text, want)
	}
}

// ${VAR} is looked up in the inherited and command environments, the
// command environment winning, and the program gets the expanded
// arguments.
func TestPlaceholdersReachTheProgram(t *testing.T) {
	tool, _ := scriptTool(t, `for a in "$@"; do echo "[$a]"; done`,
		map[string]any{"command": []string{"./.basis/tools/t", "Bearer ${TOKEN}", "${UNSET:-fallback}", "${EMPTY:-was empty}", "$${LITERAL}", "${WHO}"}},
		declared.Config{
			Environ:    append(pathEnv(), "TOKEN=t0k", "EMPTY=", "WHO=inherited"),
			CommandEnv: []string{"WHO=command"},
		})
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "[Bearer t0k]\n[fallback]\n[was empty]\n[${LITERAL}]\n[command]"
	if diff := cmp.Diff(want, res.Text); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

// A relative program path and cwd resolve against the workspace root,
// whatever the process's own working directory; a bare name is looked up
// in the PATH the program gets.
func TestResolutionAgainstRoot(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"relative": map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"./.basis/tools/x"}, "cwd": "sub"},
		"bare":     map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"only-in-tool-path"}},
	}))
	script(t, root, ".basis/tools/x", "pwd")
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	script(t, binDir, "only-in-tool-path", "echo found")
	tools := loadTools(t, &declared.Config{Root: root, Environ: []string{"PATH=" + binDir + ":/usr/bin:/bin"}})
	t.Chdir(t.TempDir())
	for _, tc := range []struct{ tool, want string }{{"bare", "found"}, {"relative", filepath.Join(root, "sub")}} {
		var tool *declared.Tool
		for _, tl := range tools {
			if tl.Descriptor().Name == tc.tool {
				tool = tl
			}
		}
		res, err := tool.Execute(t.Context(), callWith(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if res.Text != tc.want {
			t.Errorf("%s printed %q, want %q", tc.tool, res.Text, tc.want)
		}
	}
}

func TestResults(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"stdout is the result", `echo '{"build": 42}'`, `{"build": 42}`},
		{"only trailing newlines are trimmed", `printf '  two\n\nlines  \n\n\n'`, "  two\n\nlines  "},
		{"stderr is not the result", `echo out; echo err >&2`, "out"},
		{"nothing printed", `true`, "t finished and printed nothing"},
		{"only newlines printed", `printf '\n\n'`, "t finished and printed nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := scriptTool(t, tt.body, nil, declared.Config{})
			res, err := tool.Execute(t.Context(), callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(contract.Result{Text: tt.want}, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTruncatedOutputSaysSo(t *testing.T) {
	tool, _ := scriptTool(t, `head -c 3000000 /dev/zero | tr '\0' a; echo; echo finished >&2`, nil, declared.Config{})
	var lines []string
	ctx := contract.WithProgress(t.Context(), func(line string) { lines = append(lines, line) })
	res, err := tool.Execute(ctx, callWith(`{}`))
	if err != nil {
		t.Fatal(err) // the program ran to its end: it was not killed by the limit
	}
	if !res.Truncated {
		t.Error("Truncated = false for 3 MB of output")
	}
	note := "\n[output truncated: t printed more than 1 MiB; only the first 1 MiB is shown]"
	if !strings.HasSuffix(res.Text, note) || len(res.Text) != subprocess.DefaultStdoutLimit+len(note) {
		t.Errorf("result is %d bytes ending %q", len(res.Text), res.Text[max(0, len(res.Text)-100):])
	}
	if diff := cmp.Diff([]string{"finished"}, lines); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// stderr lines go to the context's progress hook as they arrive.
func TestStderrStreamsToProgress(t *testing.T) {
	tool, _ := scriptTool(t, `echo one >&2; echo result; printf 'two\nthree' >&2`, nil, declared.Config{})
	var (
		mu    sync.Mutex
		lines []string
	)
	ctx := contract.WithProgress(t.Context(), func(line string) { mu.Lock(); lines = append(lines, line); mu.Unlock() })
	res, err := tool.Execute(ctx, callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "result" {
		t.Errorf("result = %q", res.Text)
	}
	if diff := cmp.Diff([]string{"one", "two", "three"}, lines); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name  string
		body  string // "" writes no program
		extra map[string]any
		want  string
		kind  subprocess.Kind
		code  int
		is    error
	}{
		{"exit with stderr", "echo 'job not found' >&2; echo ignored; exit 3", nil, "t exited 3: job not found", subprocess.Exited, 3, nil},
		{"exit with stdout only", "echo 'usage: t JOB'; exit 2", nil, "t exited 2: usage: t JOB", subprocess.Exited, 2, nil},
		{"exit silently", "exit 1", nil, "t exited 1 and said nothing", subprocess.Exited, 1, nil},
		{"killed by a signal", "echo 'crashing' >&2; kill -SEGV $$", nil, "t was killed by signal SIGSEGV: crashing", subprocess.Signaled, 0, nil},
		{"program missing", "", nil, "t could not start ./.basis/tools/t: no such file or directory", subprocess.StartFailed, 0, fs.ErrNotExist},
		{"not in PATH", "", map[string]any{"command": []string{"no-such-program-anywhere"}}, "t could not start no-such-program-anywhere: not found in PATH", subprocess.StartFailed, 0, subprocess.ErrNotFound},
		{"cwd missing", "true", map[string]any{"cwd": "build/out"}, "t could not start: its working directory build/out cannot be entered: no such file or directory", subprocess.StartFailed, 0, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := scriptTool(t, tt.body, tt.extra, declared.Config{})
			_, err := tool.Execute(t.Context(), callWith(`{}`))
			checkRunError(t, err, tt.want, tt.kind, tt.code, tt.is)
		})
	}
}

func TestCouldNotStartReasons(t *testing.T) {
	t.Run("not executable", func(t *testing.T) {
		tool, root := scriptTool(t, "", nil, declared.Config{})
		writeFile(t, root, ".basis/tools/t", "#!/bin/sh\ntrue\n", 0o644)
		_, err := tool.Execute(t.Context(), callWith(`{}`))
		if os.Geteuid() == 0 {
			// root may still not execute a file without any x bit
			if err == nil {
				t.Skip("root ran a file without an execute bit")
			}
		}
		checkRunError(t, err, "t could not start ./.basis/tools/t: permission denied", subprocess.StartFailed, 0, fs.ErrPermission)
	})
	t.Run("bad interpreter", func(t *testing.T) {
		tool, root := scriptTool(t, "", nil, declared.Config{})
		writeFile(t, root, ".basis/tools/t", "#!/no/such/interpreter\n", 0o755)
		_, err := tool.Execute(t.Context(), callWith(`{}`))
		checkRunError(t, err, "t could not start ./.basis/tools/t: the interpreter its #! line names was not found", subprocess.StartFailed, 0, subprocess.ErrBadInterpreter)
	})
}

func TestTimeout(t *testing.T) {
	tool, _ := scriptTool(t, "sleep 30", map[string]any{"timeout_ms": 300}, declared.Config{})
	start := time.Now()
	_, err := tool.Execute(t.Context(), callWith(`{}`))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 300 ms timeout returned after %v", took)
	}
	checkRunError(t, err, "t did not finish within 300 milliseconds and was stopped", subprocess.TimedOut, 0, nil)
	if d := tool.Descriptor().Timeout; d != 300*time.Millisecond {
		t.Errorf("descriptor timeout = %v", d)
	}
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	tool, _ := scriptTool(t, "sleep 30", nil, declared.Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := tool.Execute(ctx, callWith(`{}`))
	checkRunError(t, err, "t did not finish before the call's deadline and was stopped", subprocess.TimedOut, 0, nil)

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err = tool.Execute(ctx, callWith(`{}`))
	checkRunError(t, err, "t was stopped because the call was cancelled", subprocess.Canceled, 0, nil)
}

// checkRunError asserts the message the model reads and that the exact
// outcome is reachable with errors.As.
func checkRunError(t *testing.T, err error, want string, kind subprocess.Kind, code int, is error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	var re *declared.RunError
	var ee *subprocess.ExitError
	if !errors.As(err, &re) || !errors.As(err, &ee) {
		t.Fatalf("%T does not carry a *RunError and a *subprocess.ExitError", err)
	}
	if re.Tool != "t" || ee.Outcome.Kind != kind || (kind == subprocess.Exited && ee.Outcome.Code != code) {
		t.Errorf("outcome = %+v (tool %q), want kind %v code %d", ee.Outcome, re.Tool, kind, code)
	}
	if kind == subprocess.Signaled && ee.Outcome.Signal != syscall.SIGSEGV {
		t.Errorf("signal = %v", ee.Outcome.Signal)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("errors.Is(%v, %v) = false", err, is)
	}
}

// One tool serves concurrent calls, each with its own input and result.
func TestConcurrentCalls(t *testing.T) {
	tool, _ := scriptTool(t, "cat", nil, declared.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			input := `{"n":` + strings.Repeat("1", i+1) + `}`
			res, err := tool.Execute(t.Context(), callWith(input))
			if err == nil && res.Text != input {
				err = errors.New("result " + res.Text + " for input " + input)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Entries of the given environments that no program can receive are left
// out instead of failing every call.
func TestUnusableEnvironmentEntriesLeftOut(t *testing.T) {
	tool, _ := scriptTool(t, `printf '%s|%s' "$GOOD" "$ALSO_GOOD"`, nil, declared.Config{
		Environ:    append(pathEnv(), "NO_EQUALS_SIGN", "=nameless", "GOOD=yes"),
		CommandEnv: []string{"NUL=a\x00b", "ALSO_GOOD=yes"},
	})
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil || res.Text != "yes|yes" {
		t.Errorf("Execute = %q, %v", res.Text, err)
	}
}
