//go:build unix

package spawn_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
	"github.com/basis-go/basis/subprocess"
)

// agentScript stands in for an agent command line: it answers with the
// task it read on stdin, its delegation depth and a variable of its
// inherited environment, and logs a line on stderr.
const agentScript = `task=$(cat)
echo "thinking about it" >&2
printf 'task=%s depth=%s key=%s\n\n' "$task" "$BASIS_SPAWN_DEPTH" "$AGENT_API_KEY"
`

// DelegateArgv makes the CommandDelegator a host would: the program runs
// in the workspace root, with the Environ the tool was given.
func TestDelegateArgvRunsTheProgramInTheRootWithEnviron(t *testing.T) {
	dir := t.TempDir()
	agent := writeScript(t, dir, "agent", `cat >/dev/null; printf 'dir=%s key=%s\n' "$(pwd -P)" "$AGENT_API_KEY"`)
	tool := newTool(t, dir, &spawn.Options{
		DelegateArgv: []string{agent},
		Environ:      []string{"PATH=" + os.Getenv("PATH"), "AGENT_API_KEY=from-environ"},
	})
	res, err := tool.Execute(t.Context(), callOf("fix it"))
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "dir=" + real + " key=from-environ"; strings.TrimSpace(res.Text) != want {
		t.Errorf("answer %q, want %q", res.Text, want)
	}
}

func TestCommandDelegatorRunsTheAgentWithTheTaskOnStdin(t *testing.T) {
	dir := t.TempDir()
	agent := writeScript(t, dir, "agent", agentScript)
	delegator := spawn.CommandDelegator{
		Argv:    []string{agent},
		Dir:     dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "AGENT_API_KEY=inherited-key", spawn.DepthEnv + "=7"},
		Timeout: 30 * time.Second,
	}
	tool := newTool(t, dir, &spawn.Options{Delegator: delegator})

	for depth, want := range []string{
		"task=!fix it; then 'test' depth=1 key=inherited-key",
		"task=!fix it; then 'test' depth=2 key=inherited-key",
	} {
		var progress lines
		ctx := contract.WithProgress(contract.WithDelegationDepth(t.Context(), depth), progress.add)
		res, err := tool.Execute(ctx, callOf("!!fix it; then 'test'"))
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if res.Text != want {
			t.Errorf("depth %d: answer %q, want %q", depth, res.Text, want)
		}
		if diff := cmp.Diff([]string{"thinking about it"}, progress.get()); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
	}
	// At the bound the task never reaches the agent.
	_, err := tool.Execute(contract.WithDelegationDepth(t.Context(), 2), callOf("fix it"))
	if !errors.Is(err, spawn.ErrDepthExceeded) {
		t.Errorf("task at depth 2: %v", err)
	}
}

func TestCommandDelegatorFailures(t *testing.T) {
	dir := t.TempDir()
	path := []string{"PATH=" + os.Getenv("PATH")}
	tests := []struct {
		name   string
		script string
		says   string
		kind   subprocess.Kind
	}{
		{"exit with stderr", "echo 'no API key set' >&2; echo partial; exit 3", "the delegate exited with code 3:\nno API key set", subprocess.Exited},
		{"exit with stdout only", "echo 'usage: agent TASK'; exit 2", "the delegate exited with code 2:\nusage: agent TASK", subprocess.Exited},
		{"silent exit", "exit 1", "the delegate exited with code 1 and printed nothing", subprocess.Exited},
		{"timeout", "sleep 30", "the delegate timed out and was stopped", subprocess.TimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := spawn.CommandDelegator{Argv: []string{writeScript(t, dir, "agent", tt.script)}, Env: path, Timeout: 500 * time.Millisecond}
			tool := newTool(t, "", &spawn.Options{Delegator: d})
			_, err := tool.Execute(t.Context(), callOf("task"))
			var exit *subprocess.ExitError
			if !errors.As(err, &exit) || exit.Outcome.Kind != tt.kind {
				t.Fatalf("error %v, want an *ExitError of kind %v", err, tt.kind)
			}
			if want := "spawn: the subagent did not answer: " + tt.says; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}

	missing := spawn.CommandDelegator{Argv: []string{"no-such-agent-program"}, Env: path}
	_, err := missing.Delegate(t.Context(), "task")
	if !errors.Is(err, subprocess.ErrNotFound) || !strings.Contains(err.Error(), "could not start") {
		t.Errorf("missing program: %v", err)
	}
	_, err = spawn.CommandDelegator{}.Delegate(t.Context(), "task")
	if !errors.Is(err, subprocess.ErrInvalidCmd) || !strings.Contains(err.Error(), "cannot be run") {
		t.Errorf("no argv: %v", err)
	}
}

func TestCommandDelegatorDepthComesFromTheContext(t *testing.T) {
	agent := writeScript(t, t.TempDir(), "agent", `printf %s "$BASIS_SPAWN_DEPTH"`)
	d := spawn.CommandDelegator{Argv: []string{agent}, Env: []string{"BASIS_SPAWN_DEPTH=99"}}
	for _, depth := range []int{0, 1, 5} {
		got, err := d.Delegate(contract.WithDelegationDepth(t.Context(), depth), "task")
		if err != nil || got != strconv.Itoa(depth) {
			t.Errorf("depth %d: delegate saw %q, %v", depth, got, err)
		}
	}
}

// The delegate inherits its environment, credentials included (it is an
// agent that needs its API key), but never basis's own variables: with
// BASIS_SERVE_TOKEN it could answer basis's approval questions. Only the
// depth, which Delegate sets, is basis's.
func TestCommandDelegatorGetsNoneOfBasissOwnVariables(t *testing.T) {
	agent := writeScript(t, t.TempDir(), "agent", `env`)
	d := spawn.CommandDelegator{Argv: []string{agent}, Env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/operator", "FOO=bar",
		"ANTHROPIC_API_KEY=agent-key", "GITHUB_TOKEN=gh",
		"BASIS_SERVE_TOKEN=canary-serve", "BASIS_CONFIG_DIR=/home/operator/.config/basis", "BASIS_DELEGATE=x", "basis_other=y",
	}}
	out, err := d.Delegate(contract.WithDelegationDepth(t.Context(), 1), "task")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ANTHROPIC_API_KEY", "BASIS_SPAWN_DEPTH", "FOO", "GITHUB_TOKEN", "HOME", "PATH"}
	got := slices.DeleteFunc(envNames(out), func(n string) bool { return n == "PWD" || n == "SHLVL" || n == "_" })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the delegate's variables (-want +got):\n%s", diff)
	}
	if strings.Contains(out, "canary-serve") {
		t.Error("the delegate saw basis's serve token")
	}
}

// TestDepthFrom: a delegate starts at the depth its parent gave it; a
// value that is no depth is refused, and never quoted.
func TestDepthFrom(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		want    int
		err     bool
	}{
		{environ: nil, want: 0},
		{environ: []string{spawn.DepthEnv + "="}, want: 0},
		{environ: []string{"HOME=/h", spawn.DepthEnv + "=2"}, want: 2},
		{environ: []string{spawn.DepthEnv + "=-1"}, err: true},
		{environ: []string{spawn.DepthEnv + "=secret-value"}, err: true},
	} {
		got, err := spawn.DepthFrom(tc.environ)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("DepthFrom(%q) = %d, %v; want %d, error %v", tc.environ, got, err, tc.want, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
}
