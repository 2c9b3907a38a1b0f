//go:build unix

package declared_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

// One tool with an unset ${VAR} breaks only itself: it is listed with its
// descriptor, refuses its calls naming the variable and how to set it,
// never starts its program, and every other tool works.
func TestUnsetVariableMakesOnlyItsToolUnavailable(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"issues": map[string]any{
			"description": "d", "input_schema": map[string]any{"type": "object"},
			"command": []string{"./.basis/tools/mark"},
			"env":     map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
		},
		"go_vet": map[string]any{
			"description": "d", "input_schema": map[string]any{"type": "object"},
			"command": []string{"./.basis/tools/vet"},
		},
	}))
	marker := filepath.Join(root, "started")
	script(t, root, ".basis/tools/mark", "touch "+marker)
	script(t, root, ".basis/tools/vet", "echo vetted")
	source := filepath.Join(root, declared.WorkspaceFile)

	tools, err := declared.Load(t.Context(), root, &declared.Options{Environ: pathEnv()})
	if err != nil {
		t.Fatalf("Load = %v; an unset variable must not fail the load", err)
	}
	if diff := cmp.Diff([]string{"go_vet", "issues"}, names(tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	vet, issues := tools[0], tools[1]
	if err := vet.Unavailable(); err != nil {
		t.Errorf("go_vet.Unavailable() = %v", err)
	}
	if res, err := vet.Execute(t.Context(), callWith(`{}`)); err != nil || res.Text != "vetted" {
		t.Errorf("go_vet: %q, %v; the other tools must work", res.Text, err)
	}
	if d := issues.Descriptor(); d.Name != "issues" || d.Source != source || d.Binding != contract.BindingDeclared {
		t.Errorf("an unavailable tool's descriptor = %+v", d)
	}

	want := "issues is unavailable: variable GITHUB_TOKEN (env.GITHUB_TOKEN, " + source + ":19:25) is not set; " +
		"set it in the environment basis runs in, or give a default in the manifest: ${GITHUB_TOKEN:-default}"
	_, previewErr := issues.AuthorizationPreview(t.Context(), callWith(`{}`))
	_, execErr := issues.Execute(t.Context(), callWith(`{}`))
	for _, err := range []error{issues.Unavailable(), previewErr, execErr, issues.CheckStart()} {
		if err == nil || err.Error() != want {
			t.Errorf("error = %v, want %q", err, want)
			continue
		}
		var ue *declared.UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, contract.ErrRefused) || !errors.Is(err, declared.ErrUnavailable) || !errors.Is(err, configfile.ErrUnsetVariable) {
			t.Errorf("%v does not wrap what it promises", err)
			continue
		}
		if len(ue.Problems) != 1 || variableOf(ue.Problems[0]) != "GITHUB_TOKEN" || ue.Problems[0].Field != "env.GITHUB_TOKEN" || ue.Problems[0].Line != 19 {
			t.Errorf("problems = %v", ue.Problems)
		}
	}
	if fileExists(marker) {
		t.Error("an unavailable tool started its program")
	}

	// Once the variable is set, the same manifest gives a working tool.
	tool := loadTool(t, root, &declared.Options{Environ: append(pathEnv(), "GITHUB_TOKEN=x")}, "issues")
	if _, err := tool.Execute(t.Context(), callWith(`{}`)); err != nil || !fileExists(marker) {
		t.Errorf("with the variable set: %v", err)
	}
}

// Any load problem other than an unset variable still means no tools at
// all: only an unset variable is a tool's own business.
func TestOtherProblemsStillFailTheLoad(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"unset": map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"./x", "${UNSET}"}},
		"bad":   map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"./x"}, "timeout_ms": 0},
	}))
	tools, err := declared.Load(t.Context(), root, &declared.Options{Environ: pathEnv()})
	problems := problemsOf(t, err)
	if tools != nil || len(problems) != 1 || problems[0].Field != "timeout_ms" {
		t.Errorf("Load = %v, %v; want only the timeout_ms problem and no tools", names(tools), err)
	}
}

// A command argument that puts a credential-looking ${VAR} on the
// command line is a warning, not an error; env is where credentials go.
func TestCredentialInArgumentWarns(t *testing.T) {
	root := workspace(t, `{
  "schema": 1,
  "tools": {
    "t": {
      "description": "d",
      "input_schema": {},
      "command": ["${TOOLS_DIR:-.}/curl", "-H", "Authorization: Bearer ${GITHUB_Token}", "--data", "${BODY:-${db_password}}", "${MONKEY_ID}", "${API_SECRET_FILE}", "${HOME}", "$${LITERAL_TOKEN}"],
      "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "PASSWORD": "${SECRET:-x}"}
    }
  }
}`)
	tool := loadTool(t, root, &declared.Options{Environ: append(pathEnv(), "GITHUB_TOKEN=x", "GITHUB_Token=y", "db_password=p", "MONKEY_ID=1", "API_SECRET_FILE=f", "HOME=/h")}, "t")
	type warned struct {
		Field, Variable string
		Line, Column    int
	}
	var got []warned
	for _, w := range tool.Warnings() {
		got = append(got, warned{w.Field, w.Variable, w.Line, w.Column})
		if w.Tool != "t" || w.File != filepath.Join(root, declared.WorkspaceFile) {
			t.Errorf("warning not located: %+v", w)
		}
		if s := w.String(); !strings.Contains(s, "/proc/<pid>/cmdline") || !strings.Contains(s, `"env"`) || strings.Contains(s, "\n") {
			t.Errorf("warning does not say why and what to do: %s", s)
		}
	}
	want := []warned{
		{"command[2]", "GITHUB_Token", 7, 49},
		{"command[4]", "db_password", 7, 100},
		{"command[5]", "MONKEY_ID", 7, 127}, // *KEY*: a false alarm, and only a warning
		{"command[6]", "API_SECRET_FILE", 7, 143},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if err := tool.Unavailable(); err != nil {
		t.Errorf("a warning made the tool unavailable: %v", err)
	}
}

func TestNetworkFlag(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"online":  map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"/bin/cat"}, "side_effect": "external", "network": true},
		"offline": map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"/bin/cat"}, "side_effect": "external", "network": false},
		"default": map[string]any{"description": "d", "input_schema": map[string]any{}, "command": []string{"/bin/cat"}},
	}))
	type shown struct {
		Network      bool
		Capabilities []contract.Capability
		InPreview    []contract.Capability
	}
	got := map[string]shown{}
	for _, tool := range loadTools(t, root, &declared.Options{Environ: pathEnv()}) {
		preview, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Descriptor().Name] = shown{tool.Spec().Network, tool.Descriptor().Capabilities, preview.Capabilities}
	}
	exec := []contract.Capability{contract.CapabilityProcessExec}
	net := []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityNetwork}
	want := map[string]shown{
		"online":  {true, net, net},
		"offline": {false, exec, exec},
		"default": {false, exec, exec},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("network (-want +got):\n%s", diff)
	}
	if s := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "online").Spec(); !strings.Contains(s.String(), ", network") || !strings.Contains(mustJSON(t, s), `"network":true`) {
		t.Errorf("the spec's forms do not show network: %s", s)
	}
}

// CheckStart finds what would stop a program from starting, without
// running it, located at command[0] or cwd in the manifest.
func TestCheckStart(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		tool  map[string]any
		want  string // "" for no problem; else the message after "tool t: "
		is    error
	}{
		{"fine", func(t *testing.T, root string) { script(t, root, "bin/x", "true") },
			map[string]any{"command": []string{"./bin/x"}}, "", nil},
		{"fine in PATH", nil, map[string]any{"command": []string{"sh"}}, "", nil},
		{"missing", nil, map[string]any{"command": []string{"./bin/x"}},
			"command[0]: the program ./bin/x does not exist", os.ErrNotExist},
		{"a directory", func(t *testing.T, root string) { os.MkdirAll(filepath.Join(root, "bin/x"), 0o755) },
			map[string]any{"command": []string{"./bin/x"}}, "command[0]: the program ./bin/x is a directory", nil},
		{"not executable", func(t *testing.T, root string) { writeFile(t, root, "bin/x", "#!/bin/sh\n", 0o644) },
			map[string]any{"command": []string{"./bin/x"}}, "command[0]: the program ./bin/x is not executable: permission denied; chmod +x it", os.ErrPermission},
		{"bad interpreter", func(t *testing.T, root string) { writeFile(t, root, "bin/x", "#!/no/such/sh -e\n", 0o755) },
			map[string]any{"command": []string{"./bin/x"}}, "command[0]: the program ./bin/x names an interpreter on its #! line that does not exist", nil},
		{"not in PATH", nil, map[string]any{"command": []string{"no-such-program-anywhere"}},
			"command[0]: its program no-such-program-anywhere is in no directory of the PATH it gets; install it, or set PATH in the tool's env in $SOURCE", nil},
		{"cwd missing", func(t *testing.T, root string) { script(t, root, "bin/x", "true") },
			map[string]any{"command": []string{"./bin/x"}, "cwd": "build/out"},
			"cwd: the working directory build/out cannot be entered: no such file or directory", os.ErrNotExist},
		{"cwd a file", func(t *testing.T, root string) { script(t, root, "bin/x", "true") },
			map[string]any{"command": []string{"./bin/x"}, "cwd": "bin/x"}, "cwd: the working directory bin/x is not a directory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := map[string]any{"description": "d", "input_schema": map[string]any{}}
			for k, v := range tt.tool {
				tool[k] = v
			}
			root := workspace(t, manifestOf(t, map[string]any{"t": tool}))
			if tt.setup != nil {
				tt.setup(t, root)
			}
			source := filepath.Join(root, declared.WorkspaceFile)
			err := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "t").CheckStart()
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckStart = %v, want nil", err)
				}
				return
			}
			if os.Geteuid() == 0 && tt.name == "not executable" {
				t.Skip("root may execute anything")
			}
			var de *configfile.Error
			if !errors.As(err, &de) || !errors.Is(err, declared.ErrCannotStart) {
				t.Fatalf("CheckStart = %v, want an *Error wrapping ErrCannotStart", err)
			}
			if de.File != source || de.Line < 1 || toolOf(de) != "t" {
				t.Errorf("not located in the manifest: %#v", de)
			}
			want := strings.ReplaceAll(tt.want, "$SOURCE", source)
			if got := err.Error(); !strings.HasSuffix(got, ": tool t: "+want) {
				t.Errorf("CheckStart = %q, want it to end %q", got, want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}
