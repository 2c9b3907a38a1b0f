//go:build unix

package sandbox_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

const (
	operatorFile  = "/home/u/.config/basis/sandbox.json"
	workspaceFile = "/repo/.basis/sandbox.json"
)

// checkConfigErrors fails unless err is a join of *configfile.Error, each
// naming file and, but for an unreadable file, a line and column.
func checkConfigErrors(t *testing.T, file string, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		ce, ok := e.(*configfile.Error)
		if !ok {
			t.Fatalf("problem %v is a %T, want a *configfile.Error", e, e)
		}
		if ce.File != file || ce.Line < 1 || ce.Column < 1 {
			t.Fatalf("problem %v: file %q line %d column %d, want %q and a position", e, ce.File, ce.Line, ce.Column, file)
		}
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    *sandbox.Config
		wantErr string
	}{
		{"minimal", `{"schema": 1}`, &sandbox.Config{}, ""},
		{"everything", `{"schema": 1, "mode": "read-only", "write": ["~/go/pkg/mod", "/srv//build/"],
			"spawn": {"network": true, "mode": "workspace-write"},
			"tools": {"deploy": {"network": false, "write": ["/var/deploy"]}}}`,
			&sandbox.Config{
				Mode:  sandbox.ReadOnly,
				Write: []string{"/home/u/go/pkg/mod", "/srv/build"},
				Spawn: sandbox.Override{Mode: sandbox.WorkspaceWrite, Network: ptr(true)},
				Tools: map[string]sandbox.Override{"deploy": {Network: ptr(false), Write: []string{"/var/deploy"}}},
			}, ""},
		{"off", `{"schema": 1, "mode": "off"}`, &sandbox.Config{Mode: sandbox.Off}, ""},
		{"pass_env", `{"schema": 1, "pass_env": ["AWS_PROFILE", "GITHUB_*", "*_API_KEY"]}`,
			&sandbox.Config{PassEnv: []string{"AWS_PROFILE", "GITHUB_*", "*_API_KEY"}}, ""},
		{"pass_env: basis's own", `{"schema": 1, "pass_env": ["PATH", "BASIS_SERVE_TOKEN"]}`, nil, "1:36: pass_env[1]: invalid variable pattern: basis's own variables"},
		{"pass_env: not a name", `{"schema": 1, "pass_env": ["A-B"]}`, nil, "pass_env[0]: invalid variable pattern"},
		{"pass_env: empty", `{"schema": 1, "pass_env": [""]}`, nil, "pass_env[0]: invalid variable pattern: it is empty"},
		{"pass_env: not a list", `{"schema": 1, "pass_env": "GITHUB_TOKEN"}`, nil, "1:27: pass_env: must be a list of strings, not a string"},
		{"protect", `{"schema": 1, "protect": [".envrc", "~/.config/git", "/srv//hooks/", ".vscode/tasks.json"]}`,
			&sandbox.Config{Protect: []string{".envrc", "/home/u/.config/git", "/srv/hooks", ".vscode/tasks.json"}}, ""},
		{"protect leaving the directory", `{"schema": 1, "protect": ["../x"]}`, nil, "protect[0]: must name something inside"},
		{"protect dot-dot in the middle", `{"schema": 1, "protect": ["a/../../x"]}`, nil, "protect[0]: must name something inside"},
		{"protect empty", `{"schema": 1, "protect": [".git", ""]}`, nil, "1:35: protect[1]: is empty"},
		{"protect not a string", `{"schema": 1, "protect": [1]}`, nil, "protect[0]: must be a string, not a number"},
		{"missing schema", `{"mode": "off"}`, nil, `1:1: schema: missing; add "schema": 1`},
		{"future schema", `{"schema": 2}`, nil, "1:12: schema: this basis reads schema 1"},
		{"unknown key", `{"schema": 1, "netwrok": true}`, nil, `1:15: netwrok: unknown key (the keys are schema, mode, write, protect, spawn, tools, pass_env)`},
		{"unknown key in a section", `{"schema": 1, "spawn": {"net": true}}`, nil, `1:25: spawn: net: unknown key; did you mean network?`},
		{"bad mode", `{"schema": 1, "mode": "workspace_write"}`, nil, `1:23: mode: must be "workspace-write", "read-only" or "off"`},
		{"bad tool mode", `{"schema": 1, "tools": {"x": {"mode": "none"}}}`, nil, "tool x: mode: must be"},
		{"relative write", `{"schema": 1, "write": ["build"]}`, nil, "1:25: write[0]: must be an absolute path"},
		{"spawn in tools", `{"schema": 1, "tools": {"spawn": {}}}`, nil, `"spawn" section`},
		{"duplicate key", `{"schema": 1, "mode": "read-only", "mode": "off"}`, nil, "1:36: mode: appears twice"},
		{"nested duplicate", `{"schema": 1, "tools": {"x": {"network": false, "network": true}}}`, nil, "tool x: network: appears twice"},
		{"wrong type", `{"schema": 1, "spawn": {"network": "yes"}}`, nil, "spawn: network: must be true or false, not a string"},
		{"syntax", "{\"schema\": 1,\n \"mode\": }", nil, "sandbox.json:2:"},
		{"trailing data", `{"schema": 1} {}`, nil, "1:15: there is more after the JSON value ends"},
		{"empty", ``, nil, "empty"},
		{"not an object", `[]`, nil, "1:1: the file is an array, not an object of the sandbox.json format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sandbox.ParseConfig(operatorFile, []byte(tt.data), "/home/u")
			if tt.wantErr != "" {
				checkConfigErrors(t, operatorFile, err)
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseWorkspaceConfigMayOnlyTighten(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"read-only", `{"schema": 1, "mode": "read-only", "spawn": {"network": false}}`, ""},
		{"off", `{"schema": 1, "mode": "off"}`, "1:23: mode: a workspace sandbox.json may only tighten"},
		{"tool off", `{"schema": 1, "tools": {"x": {"mode": "off"}}}`, "tool x: mode: a workspace sandbox.json may only tighten"},
		{"network", `{"schema": 1, "spawn": {"network": true}}`, "spawn: network: a workspace sandbox.json may only tighten"},
		{"write", `{"schema": 1, "write": ["/etc"]}`, "1:24: write: a workspace sandbox.json may only tighten"},
		{"tool write", `{"schema": 1, "tools": {"x": {"write": ["/etc"]}}}`, "tool x: write: a workspace sandbox.json may only tighten"},
		{"pass_env", `{"schema": 1, "pass_env": ["AWS_*"]}`, "1:27: pass_env: a workspace sandbox.json cannot hand its programs the operator's credentials"},
		{"protect relative paths", `{"schema": 1, "protect": [".envrc", "scripts/hooks"]}`, ""},
		{"protect an absolute path", `{"schema": 1, "protect": ["/etc"]}`, "1:27: protect[0]: a workspace sandbox.json names protected paths relative to the workspace"},
		{"protect the home", `{"schema": 1, "protect": ["~/.ssh"]}`, "protect[0]: ~/ stands for the operator's home"},
		{"protect outside", `{"schema": 1, "protect": [".."]}`, "protect[0]: must name something inside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.ParseWorkspaceConfig(workspaceFile, []byte(tt.data))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseWorkspaceConfig: %v", err)
				}
				return
			}
			checkConfigErrors(t, workspaceFile, err)
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestParseConfigReportsEveryProblem: one reading names every problem of
// the file, each where it is, so one edit fixes them all.
func TestParseConfigReportsEveryProblem(t *testing.T) {
	data := `{
  "schema": 1,
  "mode": "none",
  "write": ["build", "/ok"],
  "spawn": {"netwrok": true},
  "tools": {"deploy": {"mode": "off", "write": 3}}
}`
	type at struct {
		Line, Column   int
		Subject, Field string
	}
	want := []at{
		{3, 11, "", "mode"},
		{4, 13, "", "write[0]"},
		{5, 13, "spawn", "netwrok"},
		{6, 48, "tool deploy", "write"},
	}
	_, err := sandbox.ParseConfig(operatorFile, []byte(data), "/home/u")
	checkConfigErrors(t, operatorFile, err)
	var got []at
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		ce := e.(*configfile.Error)
		got = append(got, at{ce.Line, ce.Column, ce.Subject, ce.Field})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, err)
	}
	// A workspace's file: the same problems, and what would widen.
	_, err = sandbox.ParseWorkspaceConfig(workspaceFile, []byte(data))
	checkConfigErrors(t, workspaceFile, err)
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 5 {
		t.Errorf("workspace file: %d problems, want 5 (write widens instead of being relative, and tool deploy's mode off):\n%v", n, err)
	}
}

func TestConfigPolicy(t *testing.T) {
	operator, err := sandbox.ParseConfig(operatorFile, []byte(`{"schema": 1, "write": ["/opt/cache"], "protect": [".envrc"],
		"spawn": {"network": true},
		"tools": {"fetch": {"network": false}, "lint": {"mode": "read-only"}, "grant": {"network": true, "write": ["/srv"]}}}`), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	workspace, err := sandbox.ParseWorkspaceConfig(workspaceFile, []byte(`{"schema": 1, "protect": ["scripts", ".envrc"], "tools": {"build": {"mode": "read-only"}, "grant": {"network": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		config   *sandbox.Config
		tool     string
		declared bool
		want     sandbox.Policy
	}{
		{"no config: default", nil, "x", false, sandbox.Policy{Mode: sandbox.WorkspaceWrite}},
		{"no config: declared network", nil, "x", true, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true}},
		{"spawn section", operator, sandbox.SpawnTool, false, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true, Write: []string{"/opt/cache"}, Protect: []string{".envrc"}}},
		{"operator takes the network away", operator, "fetch", true, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Write: []string{"/opt/cache"}, Protect: []string{".envrc"}}},
		{"operator mode override", operator, "lint", false, sandbox.Policy{Mode: sandbox.ReadOnly, Write: []string{"/opt/cache"}, Protect: []string{".envrc"}}},
		{"operator grants", operator, "grant", false, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true, Write: []string{"/opt/cache", "/srv"}, Protect: []string{".envrc"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.config.Policy(tt.tool, tt.declared)); diff != "" {
				t.Errorf("Policy (-want +got):\n%s", diff)
			}
		})
	}
	tighten := []struct {
		name string
		tool string
		want sandbox.Policy
	}{
		// The workspace's protected paths add to the operator's.
		{"untouched tool", "other", sandbox.Policy{Mode: sandbox.WorkspaceWrite, Write: []string{"/opt/cache"}, Protect: []string{".envrc", "scripts"}}},
		{"workspace makes it read-only", "build", sandbox.Policy{Mode: sandbox.ReadOnly, Write: []string{"/opt/cache"}, Protect: []string{".envrc", "scripts"}}},
		{"workspace takes the network the operator granted", "grant", sandbox.Policy{Mode: sandbox.WorkspaceWrite, Write: []string{"/opt/cache", "/srv"}, Protect: []string{".envrc", "scripts"}}},
	}
	for _, tt := range tighten {
		t.Run("tighten "+tt.name, func(t *testing.T) {
			got := workspace.Tighten(operator.Policy(tt.tool, false), tt.tool)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Tighten (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTightenNeverWidens(t *testing.T) {
	modes := []sandbox.Mode{sandbox.Off, sandbox.WorkspaceWrite, sandbox.ReadOnly}
	rank := map[sandbox.Mode]int{sandbox.Off: 0, sandbox.WorkspaceWrite: 1, sandbox.ReadOnly: 2}
	for _, om := range modes {
		for _, wm := range modes {
			for _, on := range []bool{false, true} {
				for _, wn := range []bool{false, true} {
					op := sandbox.Policy{Mode: om, Network: on, Write: []string{"/a", "/b/c"}, Protect: []string{".envrc", "/x"}}
					ws := sandbox.Policy{Mode: wm, Network: wn, Write: []string{"/b"}, Protect: []string{"/x", "y"}}
					got := sandbox.Tighten(op, ws)
					if diff := cmp.Diff([]string{".envrc", "/x", "y"}, got.Protect); diff != "" {
						t.Errorf("protected paths, the union of both (-want +got):\n%s", diff)
					}
					if rank[got.Mode] < rank[om] || rank[got.Mode] < rank[wm] {
						t.Errorf("Tighten(%s, %s) mode = %s, less strict than one of them", om, wm, got.Mode)
					}
					if got.Network && !(on && wn) {
						t.Errorf("Tighten(network %v, %v) allows the network", on, wn)
					}
					if diff := cmp.Diff([]string{"/b/c"}, got.Write); diff != "" {
						t.Errorf("write paths (-want +got):\n%s", diff)
					}
				}
			}
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "mode": "read-only", "write": ["~/x"], "spawn": {"network": true}, "tools": {"a": {"mode": "off"}}}`))
	f.Add([]byte(`{"schema": 1, "mode": "mode", "mode": 1}`))
	f.Add([]byte(`{"schema": 1, "tools": {"spawn": {}}}`))
	f.Add([]byte(`{"schema": 1, "protect": [".git", "~/x", "a/../b"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := sandbox.ParseConfig(operatorFile, data, "/home/u")
		if err != nil {
			checkConfigErrors(t, operatorFile, err)
			return
		}
		// Whatever parses yields policies that validate, for any tool.
		for _, tool := range []string{sandbox.SpawnTool, "a", ""} {
			if err := c.Policy(tool, false).Validate(); err != nil {
				t.Fatalf("a parsed config gives an invalid policy for %q: %v", tool, err)
			}
		}
		if ws, err := sandbox.ParseWorkspaceConfig(workspaceFile, data); err == nil {
			p := ws.Tighten(sandbox.Policy{Mode: sandbox.WorkspaceWrite}, "a")
			if p.Network || p.Mode == sandbox.Off || len(p.Write) > 0 {
				t.Fatalf("a workspace config widened the policy: %+v", p)
			}
			for _, path := range ws.Protect {
				if !slices.Contains(p.Protect, path) || filepath.IsAbs(path) {
					t.Fatalf("a workspace's protected path %q is lost or absolute: %+v", path, p)
				}
			}
		}
	})
}
