//go:build unix

package declared_test

import (
	"context"
	"encoding/json"
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
func scriptTool(t *testing.T, body string, extra map[string]any, cfg declared.Options) (*declared.Tool, string) {
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
	if cfg.Environ == nil {
		cfg.Environ = pathEnv()
	}
	return loadTool(t, root, &cfg, "t"), root
}

// The program reads exactly the bytes the preview's Subject shows as
// "input": the canonical form of the call's input. A value a shell would
// mangle reaches the program byte for byte, and nothing in it is
// executed.
func TestStdinIsTheSubjectInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin")
	tool, root := scriptTool(t, `cat > "$OUT"; echo done`,
		map[string]any{"env": map[string]string{"OUT": "${OUT_FILE}"}},
		declared.Options{Environ: append(pathEnv(), "OUT_FILE="+out)})
	t.Chdir(root)
	input := `{"q": "$(touch pwned1) ` + "`touch pwned2`" + ` 'single' \"double\" ; touch pwned3 && rm -rf / | x > y\n\ttab ${HOME} ünïcode ✓ \u0000 <&> \\",` +
		"\n\t" + `"n": [1, 2.50, -0e3, 1E400], "nested": {"z": null, "a": true}}`
	preview, err := tool.AuthorizationPreview(t.Context(), callWith(input))
	if err != nil {
		t.Fatal(err)
	}
	var subject map[string]json.RawMessage
	if err := json.Unmarshal(preview.Subject, &subject); err != nil {
		t.Fatal(err)
	}
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
	if diff := cmp.Diff(string(subject["input"]), string(got)); diff != "" {
		t.Errorf("stdin differs from the subject's input (-subject +stdin):\n%s", diff)
	}
	// Canonical: keys sorted, no insignificant whitespace, numbers and
	// escapes as JSON needs them, no HTML escaping.
	want := `{"n":[1,2.50,-0e3,1E400],"nested":{"a":true,"z":null},"q":"$(touch pwned1) ` + "`touch pwned2`" +
		` 'single' \"double\" ; touch pwned3 && rm -rf / | x > y\n\ttab ${HOME} ünïcode ✓ \u0000 <&> \\"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("stdin is not the canonical input (-want +got):\n%s", diff)
	}
	for _, name := range []string{"pwned1", "pwned2", "pwned3"} {
		if fileExists(filepath.Join(root, name)) {
			t.Errorf("%s exists: something in the input was executed", name)
		}
	}
}

// The subject names the program that runs: argv[0] resolved in the
// program's own environment, after the manifest's env. A repository that
// puts its own git first in PATH cannot hide behind "git status".
func TestSubjectProgramIsWhatRuns(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"status": map[string]any{
			"description": "d", "input_schema": map[string]any{"type": "object"},
			"command": []string{"git", "status"},
			"env":     map[string]string{"PATH": "${PWD}/.basis/bin:/usr/bin:/bin", "GIT_PAGER": "cat"},
		},
	}))
	repoGit := script(t, root, ".basis/bin/git", `echo "the repository's own git"`)
	tool := loadTool(t, root, &declared.Options{Environ: []string{"PATH=/usr/bin:/bin", "PWD=" + root}}, "status")

	preview, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var subject struct {
		Command []string `json:"command"`
		Env     []string `json:"env"`
		Program string   `json:"program"`
	}
	if err := json.Unmarshal(preview.Subject, &subject); err != nil {
		t.Fatal(err)
	}
	want := struct {
		Command []string `json:"command"`
		Env     []string `json:"env"`
		Program string   `json:"program"`
	}{[]string{"git", "status"}, []string{"GIT_PAGER", "PATH"}, repoGit}
	if diff := cmp.Diff(want, subject); diff != "" {
		t.Errorf("subject (-want +got):\n%s", diff)
	}
	if strings.Contains(string(preview.Subject), "cat\"") {
		t.Errorf("the subject shows an env value: %s", preview.Subject)
	}
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil || res.Text != "the repository's own git" {
		t.Errorf("Execute = %q, %v; want the program the subject named to run", res.Text, err)
	}
}

// A bare program the PATH it gets cannot find is refused in the preview:
// there is no program to show an approver.
func TestPreviewRefusesProgramNotFound(t *testing.T) {
	tool, _ := scriptTool(t, "", map[string]any{"command": []string{"no-such-program-anywhere"}}, declared.Options{})
	_, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
	if !errors.Is(err, contract.ErrRefused) || !errors.Is(err, declared.ErrCannotStart) || !errors.Is(err, subprocess.ErrNotFound) {
		t.Fatalf("preview = %v, want a refusal wrapping ErrRefused, ErrCannotStart and subprocess.ErrNotFound", err)
	}
	if want := "t cannot run: its program no-such-program-anywhere is in no directory of the PATH it gets"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message = %q, want it to start %q", err.Error(), want)
	}
}

// The environment is inherited, then the runtime's command environment,
// then the manifest's env; later wins.
func TestEnvironmentLayers(t *testing.T) {
	tool, _ := scriptTool(t, `printf '%s|%s|%s|%s|%s' "$ONLY_INHERITED" "$INHERITED_AND_COMMAND" "$ALL_THREE" "$ONLY_MANIFEST" "${PATH:+has-path}"`,
		map[string]any{"env": map[string]string{"ALL_THREE": "manifest", "ONLY_MANIFEST": "manifest-${ONLY_INHERITED}"}},
		declared.Options{
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
		declared.Options{
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
	tools := loadTools(t, root, &declared.Options{Environ: []string{"PATH=" + binDir + ":/usr/bin:/bin"}})
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
			tool, _ := scriptTool(t, tt.body, nil, declared.Options{})
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
	tool, _ := scriptTool(t, `head -c 3000000 /dev/zero | tr '\0' a; echo; echo finished >&2`, nil, declared.Options{})
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
	tool, _ := scriptTool(t, `echo one >&2; echo result; printf 'two\nthree' >&2`, nil, declared.Options{})
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
		{"exit with stderr only", "echo 'job not found' >&2; exit 3", nil, "t exited 3: job not found", subprocess.Exited, 3, nil},
		{"exit with stdout only", "echo 'usage: t JOB'; exit 2", nil, "t exited 2: usage: t JOB", subprocess.Exited, 2, nil},
		{"exit with both, labelled", "echo '--- FAIL: TestX'; echo 'build failed' >&2; exit 1", nil, "t exited 1:\nstdout:\n--- FAIL: TestX\nstderr:\nbuild failed", subprocess.Exited, 1, nil},
		{"signal with both, labelled", "echo partial; echo 'crashing' >&2; kill -SEGV $$", nil, "t was killed by signal SIGSEGV:\nstdout:\npartial\nstderr:\ncrashing", subprocess.Signaled, 0, nil},
		{"exit silently", "exit 1", nil, "t exited 1 and said nothing", subprocess.Exited, 1, nil},
		{"killed by a signal", "echo 'crashing' >&2; kill -SEGV $$", nil, "t was killed by signal SIGSEGV: crashing", subprocess.Signaled, 0, nil},
		{"program missing", "", nil, "t could not start ./.basis/tools/t: no such file or directory", subprocess.StartFailed, 0, fs.ErrNotExist},
		{"not in PATH", "", map[string]any{"command": []string{"no-such-program-anywhere"}}, "t could not start no-such-program-anywhere: not found in PATH", subprocess.StartFailed, 0, subprocess.ErrNotFound},
		{"cwd missing", "true", map[string]any{"cwd": "build/out"}, "t could not start: its working directory (cwd, $MANIFEST:8:14) does not exist; create it, or change cwd in $MANIFEST", subprocess.StartFailed, 0, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, root := scriptTool(t, tt.body, tt.extra, declared.Options{})
			_, err := tool.Execute(t.Context(), callWith(`{}`))
			want := strings.ReplaceAll(tt.want, "$MANIFEST", filepath.Join(root, declared.WorkspaceFile))
			checkRunError(t, err, want, tt.kind, tt.code, tt.is)
		})
	}
}

func TestCouldNotStartReasons(t *testing.T) {
	t.Run("not executable", func(t *testing.T) {
		tool, root := scriptTool(t, "", nil, declared.Options{})
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
		tool, root := scriptTool(t, "", nil, declared.Options{})
		writeFile(t, root, ".basis/tools/t", "#!/no/such/interpreter\n", 0o755)
		_, err := tool.Execute(t.Context(), callWith(`{}`))
		checkRunError(t, err, "t could not start ./.basis/tools/t: the interpreter its #! line names was not found", subprocess.StartFailed, 0, subprocess.ErrBadInterpreter)
	})
}

// A timeout names the limit that fired and the setting that raises it.
func TestTimeout(t *testing.T) {
	tool, root := scriptTool(t, "sleep 30", map[string]any{"timeout_ms": 300}, declared.Options{})
	source := filepath.Join(root, declared.WorkspaceFile)
	start := time.Now()
	_, err := tool.Execute(t.Context(), callWith(`{}`))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 300 ms timeout returned after %v", took)
	}
	checkRunError(t, err, "t did not finish within 300 milliseconds and was stopped; its limit is timeout_ms 300 in "+source+": raise it there if the tool needs longer", subprocess.TimedOut, 0, nil)
	if d := tool.Descriptor().Timeout; d != 300*time.Millisecond {
		t.Errorf("descriptor timeout = %v", d)
	}

	// The runtime wraps the Descriptor's timeout around the call as well;
	// when that deadline fires first it is still timeout_ms that fired.
	ctx, cancel := context.WithTimeout(t.Context(), tool.Descriptor().Timeout)
	defer cancel()
	_, err = tool.Execute(ctx, callWith(`{}`))
	checkRunError(t, err, "t did not finish within 300 milliseconds and was stopped; its limit is timeout_ms 300 in "+source+": raise it there if the tool needs longer", subprocess.TimedOut, 0, nil)
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	tool, _ := scriptTool(t, "sleep 30", nil, declared.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := tool.Execute(ctx, callWith(`{}`))
	// How much of the caller's 300 ms was left when the program started
	// depends on the machine's load: the message says it, the test does
	// not pin it.
	checkRunError(t, err, "t did not finish within the … its caller allowed and was stopped; that deadline is the caller's, shorter than the tool's own timeout_ms (120000), so the caller must allow more", subprocess.TimedOut, 0, nil)

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err = tool.Execute(ctx, callWith(`{}`))
	checkRunError(t, err, "t was stopped because the call was cancelled", subprocess.Canceled, 0, nil)
}

// checkRunError asserts the message the model reads (a … in want stands
// for text that varies) and that the exact outcome is reachable with
// errors.As.
func checkRunError(t *testing.T, err error, want string, kind subprocess.Kind, code int, is error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if prefix, suffix, elided := strings.Cut(want, "…"); elided {
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) || strings.Contains(msg, "\n") {
			t.Errorf("message = %q, want %q with one line where … is", msg, want)
		}
	} else if err.Error() != want {
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
	tool, _ := scriptTool(t, "cat", nil, declared.Options{})
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
	tool, _ := scriptTool(t, `printf '%s|%s' "$GOOD" "$ALSO_GOOD"`, nil, declared.Options{
		Environ:    append(pathEnv(), "NO_EQUALS_SIGN", "=nameless", "GOOD=yes"),
		CommandEnv: []string{"NUL=a\x00b", "ALSO_GOOD=yes"},
	})
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil || res.Text != "yes|yes" {
		t.Errorf("Execute = %q, %v", res.Text, err)
	}
}
