//go:build unix

package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// sandboxQuestion is one question the tool asked its host's sandbox.
type sandboxQuestion struct {
	Tool    string
	Network bool
	Dir     string
}

// fakeSandbox answers with a confinement that marks the command's
// environment, so a test sees Confine was used, and records what it was
// asked and whether it released.
type fakeSandbox struct {
	mu       sync.Mutex
	asked    []sandboxQuestion
	released int
}

const fakeSandboxSubject = `{"mode":"workspace-write","network":"none","write":["${TMPDIR}"]}`

func (f *fakeSandbox) hook(tool string, network bool, dir string) (*subprocess.Confinement, error) {
	f.mu.Lock()
	f.asked = append(f.asked, sandboxQuestion{tool, network, dir})
	f.mu.Unlock()
	return &subprocess.Confinement{
		Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
			cmd.Env = append(cmd.Env, "CONFINED_BY=fake")
			return cmd.Start, func() { f.mu.Lock(); f.released++; f.mu.Unlock() }, nil
		},
		Subject: json.RawMessage(fakeSandboxSubject),
		Summary: "sandbox workspace-write: writes only to ${TMPDIR}; no network",
	}, nil
}

func TestSandboxConfinesLocalCommandsOnly(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name    string
		input   string
		subject string
		summary string
		asked   []sandboxQuestion
		result  string
	}{
		{
			name:    "a command here is confined and shows it",
			input:   `!echo "confined by $CONFINED_BY"`,
			subject: `{"body":"echo \"confined by $CONFINED_BY\"","commands":null,"cwd":"` + root + `","mode":"command","sandbox":` + fakeSandboxSubject + `,"target":"local","unanalysable":"a word has a parameter expansion ($NAME)"}`,
			summary: `run "echo \"confined by $CONFINED_BY\"" in ` + root + `; sandbox workspace-write: writes only to ${TMPDIR}; no network`,
			asked:   []sandboxQuestion{{Tool: contract.SpawnName, Dir: root}, {Tool: contract.SpawnName, Dir: root}},
			result:  "confined by fake",
		},
		{
			name:    "a command on a target is not this machine's to confine",
			input:   "!@ci make",
			subject: `{"body":"make","commands":[["make"]],"cwd":"","mode":"command","target":"ci"}`,
			summary: `run "make" on target ci`,
			result:  "from ci",
		},
		{
			name:    "a task runs no program here",
			input:   "summarise the README",
			subject: `{"body":"summarise the README","commands":null,"cwd":"` + root + `","mode":"agent","target":"local"}`,
			summary: "delegate a task: summarise the README",
			result:  "summary",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{}
			target := &recordingExecutor{result: spawn.CommandResult{Stdout: []byte("from ci")}}
			tool := newTool(t, root, &spawn.Options{
				Environ: []string{"PATH=" + os.Getenv("PATH")}, Sandbox: sb.hook,
				Targets: map[string]spawn.Executor{"ci": target}, Delegator: &recordingDelegator{answer: "summary"},
			})
			p, err := tool.AuthorizationPreview(context.Background(), callOf(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.subject, string(p.Subject)); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.summary, p.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			res, err := tool.Execute(context.Background(), callOf(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.result {
				t.Errorf("result %q, want %q", res.Text, tt.result)
			}
			if diff := cmp.Diff(tt.asked, sb.asked); diff != "" {
				t.Errorf("questions to the sandbox (-want +got):\n%s", diff)
			}
			if want := len(tt.asked) / 2; sb.released != want {
				t.Errorf("release called %d times, want %d", sb.released, want)
			}
			for _, req := range target.calls() {
				if req.Confine != nil {
					t.Error("a target was handed this machine's sandbox")
				}
			}
		})
	}
}

func TestSandboxThatCannotConfineRefusesTheCommand(t *testing.T) {
	errUnavailable := errors.New(`sandbox unavailable: this kernel has no Landlock; to run programs without a sandbox, the operator sets "mode": "off"`)
	tests := []struct {
		name    string
		hook    func(string, bool, string) (*subprocess.Confinement, error)
		message string
		cause   error
	}{
		{
			name:    "the sandbox is unavailable",
			hook:    func(string, bool, string) (*subprocess.Confinement, error) { return nil, errUnavailable },
			message: "spawn: the command cannot run here: " + errUnavailable.Error(),
			cause:   errUnavailable,
		},
		{
			name:    "no confinement and no error",
			hook:    func(string, bool, string) (*subprocess.Confinement, error) { return nil, nil },
			message: "spawn: the command cannot run here: the host's sandbox gave no confinement to run it in",
		},
		{
			name: "a subject that is not an object",
			hook: func(string, bool, string) (*subprocess.Confinement, error) {
				return &subprocess.Confinement{Confine: func(c *exec.Cmd) (func() error, func(), error) { return c.Start, nil, nil }, Subject: json.RawMessage(`[]`)}, nil
			},
			message: "spawn: the command cannot run here: the host's sandbox gave no confinement to run it in",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tool := newTool(t, root, &spawn.Options{Sandbox: tt.hook})
			marker := filepath.Join(root, "ran")
			_, previewErr := tool.AuthorizationPreview(context.Background(), callOf("!touch "+marker))
			_, executeErr := tool.Execute(context.Background(), callOf("!touch "+marker))
			for stage, err := range map[string]error{"preview": previewErr, "Execute": executeErr} {
				if err == nil {
					t.Fatalf("%s: want a refusal, got none", stage)
				}
				if err.Error() != tt.message {
					t.Errorf("%s: message\n got %q\nwant %q", stage, err.Error(), tt.message)
				}
				if !errors.Is(err, contract.ErrRefused) || !errors.Is(err, spawn.ErrNotConfined) {
					t.Errorf("%s: %v does not wrap contract.ErrRefused and spawn.ErrNotConfined", stage, err)
				}
				if tt.cause != nil && !errors.Is(err, tt.cause) {
					t.Errorf("%s: %v does not wrap the sandbox's error", stage, err)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran although its sandbox could not confine it")
			}
		})
	}
}
