//go:build unix

package declared_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// sandboxCall is one question a tool asked its host's sandbox.
type sandboxCall struct {
	Tool    string
	Network bool
	Dir     string
}

// fakeSandbox answers every question with a confinement that marks the
// program's environment (so a test sees Confine was used) and records
// what it was asked, which command it confined, and whether it released.
type fakeSandbox struct {
	mu       sync.Mutex
	asked    []sandboxCall
	paths    []string
	released int
}

const fakeSandboxSubject = `{"mode":"workspace-write","network":"none","write":["${TMPDIR}"]}`

func (f *fakeSandbox) hook(tool string, network bool, dir string) (*subprocess.Confinement, error) {
	f.mu.Lock()
	f.asked = append(f.asked, sandboxCall{tool, network, dir})
	f.mu.Unlock()
	return &subprocess.Confinement{
		Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
			f.mu.Lock()
			f.paths = append(f.paths, cmd.Path)
			f.mu.Unlock()
			cmd.Env = append(cmd.Env, "CONFINED_BY=fake")
			return cmd.Start, func() {
				f.mu.Lock()
				f.released++
				f.mu.Unlock()
			}, nil
		},
		Subject: json.RawMessage(fakeSandboxSubject),
		Summary: "sandbox workspace-write: writes only to ${TMPDIR}; no network",
	}, nil
}

func TestSandboxIsInTheSubjectAndConfinesTheRun(t *testing.T) {
	tests := []struct {
		name    string
		tool    map[string]any
		environ []string
		asked   sandboxCall // Dir: "$ROOT" is replaced by the workspace root
		subject string
		summary string
	}{
		{
			name:    "no network, the root",
			tool:    map[string]any{"command": []string{"./.basis/tools/run.sh"}},
			asked:   sandboxCall{Tool: "t", Dir: "$ROOT"},
			subject: `{"command":["./.basis/tools/run.sh"],"cwd":".","env":[],"input":{},"program":"$ROOT/.basis/tools/run.sh","sandbox":` + fakeSandboxSubject + `,"tool":"t"}`,
			summary: "run ./.basis/tools/run.sh in $ROOT; sandbox workspace-write: writes only to ${TMPDIR}; no network",
		},
		{
			name:    "a tool that declares the network asks for it",
			tool:    map[string]any{"command": []string{"./.basis/tools/run.sh"}, "network": true, "side_effect": "external", "cwd": "sub"},
			asked:   sandboxCall{Tool: "t", Network: true, Dir: "$ROOT/sub"},
			subject: `{"command":["./.basis/tools/run.sh"],"cwd":"sub","env":[],"input":{},"program":"$ROOT/.basis/tools/run.sh","sandbox":` + fakeSandboxSubject + `,"tool":"t"}`,
			summary: "run ./.basis/tools/run.sh in $ROOT/sub; sandbox workspace-write: writes only to ${TMPDIR}; no network",
		},
		{
			// The sandbox describes the directory it is given: the
			// expansion of a placeholder may be a secret, so it gets the
			// cwd as written, as the preview's Dir shows it.
			name:    "a cwd with a placeholder is described as written",
			tool:    map[string]any{"command": []string{"./.basis/tools/run.sh"}, "cwd": "${SECRET_DIR}"},
			environ: []string{"SECRET_DIR=sub"},
			asked:   sandboxCall{Tool: "t", Dir: "$ROOT/${SECRET_DIR}"},
			subject: `{"command":["./.basis/tools/run.sh"],"cwd":"${SECRET_DIR}","env":[],"input":{},"program":"$ROOT/.basis/tools/run.sh","sandbox":` + fakeSandboxSubject + `,"tool":"t"}`,
			summary: "run ./.basis/tools/run.sh in $ROOT/${SECRET_DIR}; sandbox workspace-write: writes only to ${TMPDIR}; no network",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.tool["description"] = "d"
			tt.tool["input_schema"] = map[string]any{"type": "object"}
			root := workspace(t, manifestOf(t, map[string]any{"t": tt.tool}))
			script(t, root, ".basis/tools/run.sh", `echo "confined by $CONFINED_BY"`)
			if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			sb := &fakeSandbox{}
			tool := loadTool(t, root, &declared.Options{Environ: append(pathEnv(), tt.environ...), Sandbox: sb.hook}, "t")

			p, err := tool.AuthorizationPreview(context.Background(), callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.ReplaceAll(tt.subject, "$ROOT", root), string(p.Subject)); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strings.ReplaceAll(tt.summary, "$ROOT", root), p.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}

			res, err := tool.Execute(context.Background(), callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "confined by fake" {
				t.Errorf("result %q: the run did not go through the sandbox's Confine", res.Text)
			}
			want := tt.asked
			want.Dir = strings.ReplaceAll(want.Dir, "$ROOT", root)
			// The run of a previewed call is confined by what its preview
			// got: the sandbox is asked once.
			if diff := cmp.Diff([]sandboxCall{want}, sb.asked); diff != "" {
				t.Errorf("what the preview and Execute asked the sandbox (-want +got):\n%s", diff)
			}
			// A call run without a preview asks for itself.
			unpreviewed := callWith(`{}`)
			unpreviewed.ID = "call_2"
			if res, err := tool.Execute(context.Background(), unpreviewed); err != nil || res.Text != "confined by fake" {
				t.Fatalf("a call run without a preview: %q, %v", res.Text, err)
			}
			if diff := cmp.Diff([]sandboxCall{want, want}, sb.asked); diff != "" {
				t.Errorf("what a call run without a preview asked the sandbox (-want +got):\n%s", diff)
			}
			// What the sandbox confines is the program the preview named.
			path := filepath.Join(root, ".basis/tools/run.sh")
			if diff := cmp.Diff([]string{path, path}, sb.paths); diff != "" {
				t.Errorf("confined program (-want +got):\n%s", diff)
			}
			if sb.released != 2 {
				t.Errorf("release called %d times, want once per run", sb.released)
			}
		})
	}
}

func TestSandboxThatCannotConfineRefusesTheCall(t *testing.T) {
	errNoLandlock := errors.New("sandbox unavailable: this kernel has no Landlock; to run programs without a sandbox, the operator sets \"mode\": \"off\"")
	confineOnly := func(cmd *exec.Cmd) (func() error, func(), error) { return cmd.Start, nil, nil }
	tests := []struct {
		name    string
		hook    subprocess.Confiner
		message string
		cause   error // also wrapped, when not nil
	}{
		{
			name:    "the sandbox is unavailable",
			hook:    func(string, bool, string) (*subprocess.Confinement, error) { return nil, errNoLandlock },
			message: "t cannot run here: " + errNoLandlock.Error(),
			cause:   errNoLandlock,
		},
		{
			name:    "no confinement and no error",
			hook:    func(string, bool, string) (*subprocess.Confinement, error) { return nil, nil },
			message: "t cannot run here: the host's sandbox gave no confinement to run it in",
		},
		{
			name: "a confinement without Confine",
			hook: func(string, bool, string) (*subprocess.Confinement, error) {
				return &subprocess.Confinement{Subject: json.RawMessage(`{}`)}, nil
			},
			message: "t cannot run here: the host's sandbox gave no confinement to run it in",
		},
		{
			name: "a subject that is not a JSON object",
			hook: func(string, bool, string) (*subprocess.Confinement, error) {
				return &subprocess.Confinement{Confine: confineOnly, Subject: json.RawMessage(`"on"`)}, nil
			},
			message: "t cannot run here: the host's sandbox gave no confinement to run it in",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, manifestOf(t, map[string]any{"t": map[string]any{
				"description": "d", "input_schema": map[string]any{"type": "object"},
				"command": []string{"./.basis/tools/run.sh"},
			}}))
			marker := filepath.Join(root, "ran")
			script(t, root, ".basis/tools/run.sh", "touch "+marker)
			tool := loadTool(t, root, &declared.Options{Environ: pathEnv(), Sandbox: tt.hook}, "t")

			_, previewErr := tool.AuthorizationPreview(context.Background(), callWith(`{}`))
			_, executeErr := tool.Execute(context.Background(), callWith(`{}`))
			for stage, err := range map[string]error{"preview": previewErr, "Execute": executeErr} {
				if err == nil {
					t.Fatalf("%s: want a refusal, got none", stage)
				}
				if got := err.Error(); got != tt.message {
					t.Errorf("%s: message\n got %q\nwant %q", stage, got, tt.message)
				}
				if !errors.Is(err, contract.ErrRefused) || !errors.Is(err, declared.ErrNotConfined) {
					t.Errorf("%s: %v does not wrap contract.ErrRefused and declared.ErrNotConfined", stage, err)
				}
				if tt.cause != nil && !errors.Is(err, tt.cause) {
					t.Errorf("%s: %v does not wrap the sandbox's error", stage, err)
				}
			}
			if fileExists(marker) {
				t.Error("the program ran although its sandbox could not confine it")
			}
		})
	}
}

func TestSandboxRefusingAtStartIsAStartFailure(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{"t": map[string]any{
		"description": "d", "input_schema": map[string]any{"type": "object"},
		"command": []string{"./.basis/tools/run.sh"},
	}}))
	marker := filepath.Join(root, "ran")
	script(t, root, ".basis/tools/run.sh", "touch "+marker)
	hook := func(string, bool, string) (*subprocess.Confinement, error) {
		return &subprocess.Confinement{
			Confine: func(*exec.Cmd) (func() error, func(), error) {
				return nil, nil, errors.New("sandbox unavailable: no way to cut the network")
			},
			Subject: json.RawMessage(`{}`),
		}, nil
	}
	tool := loadTool(t, root, &declared.Options{Environ: pathEnv(), Sandbox: hook}, "t")
	_, err := tool.Execute(context.Background(), callWith(`{}`))
	if err == nil {
		t.Fatal("Execute succeeded although Confine refused")
	}
	if want := "t could not start ./.basis/tools/run.sh: sandbox unavailable: no way to cut the network"; err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err.Error(), want)
	}
	if fileExists(marker) {
		t.Error("the program ran although Confine refused")
	}
}
