//go:build unix

package declared_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

// basisEnviron is an environment basis might run in: the ordinary
// variables, basis's own, and credentials, each credential a canary.
func basisEnviron() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/operator", "LANG=C.UTF-8", "FOO=bar",
		"BASIS_SERVE_TOKEN=canary-serve-token", "BASIS_CONFIG_DIR=/home/operator/.config/basis",
		"AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-github", "DB_PASSWORD=canary-db",
		"SSH_AUTH_SOCK=/tmp/canary-agent.sock", "AWS_PROFILE=dev",
	}
}

// envOf runs /usr/bin/env as a declared tool and returns what it printed,
// as a map.
func envOf(t *testing.T, tool map[string]any, cfg declared.Options) map[string]string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Fatalf("this test runs /usr/bin/env: %v", err)
	}
	body := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/usr/bin/env"}}
	for k, v := range tool {
		body[k] = v
	}
	root := workspace(t, manifestOf(t, map[string]any{"env": body}))
	res, err := loadTool(t, root, &cfg, "env").Execute(t.Context(), callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(res.Text, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			got[name] = value
		}
	}
	return got
}

// What a declared tool's program inherits: the ordinary environment, and
// neither basis's own variables nor credentials unless its manifest names
// them or the operator passes them. Placeholders still read all of it.
func TestProgramEnvironment(t *testing.T) {
	canaries := []string{"BASIS_SERVE_TOKEN", "BASIS_CONFIG_DIR", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SSH_AUTH_SOCK"}
	tests := []struct {
		name    string
		tool    map[string]any
		pass    []string
		command []string // the runtime's command environment
		want    map[string]string
		absent  []string
	}{
		{
			name:   "nothing named: the ordinary environment only",
			want:   map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/operator", "LANG": "C.UTF-8", "FOO": "bar", "AWS_PROFILE": "dev"},
			absent: canaries,
		},
		{
			name:   "the manifest names GITHUB_TOKEN",
			tool:   map[string]any{"env": map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
			want:   map[string]string{"GITHUB_TOKEN": "canary-github", "FOO": "bar"},
			absent: slices.DeleteFunc(slices.Clone(canaries), func(n string) bool { return n == "GITHUB_TOKEN" }),
		},
		{
			name:   "a placeholder reads the whole environment, under any name",
			tool:   map[string]any{"env": map[string]string{"KEY_FOR_S3": "${AWS_SECRET_ACCESS_KEY}", "OPTIONAL": "${DB_PASSWORD:-}"}},
			want:   map[string]string{"KEY_FOR_S3": "canary-aws", "OPTIONAL": "canary-db"},
			absent: []string{"BASIS_SERVE_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SSH_AUTH_SOCK"},
		},
		{
			name:   "the operator passes a name and a pattern",
			pass:   []string{"SSH_AUTH_SOCK", "GITHUB_*"},
			want:   map[string]string{"SSH_AUTH_SOCK": "/tmp/canary-agent.sock", "GITHUB_TOKEN": "canary-github"},
			absent: []string{"BASIS_SERVE_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD"},
		},
		{
			name:   "passing everything never passes basis's own",
			pass:   []string{"*"},
			want:   map[string]string{"AWS_SECRET_ACCESS_KEY": "canary-aws", "DB_PASSWORD": "canary-db"},
			absent: []string{"BASIS_SERVE_TOKEN", "BASIS_CONFIG_DIR"},
		},
		{
			name:    "the host's command environment is given whole",
			command: []string{"CI_TOKEN=from-host"},
			want:    map[string]string{"CI_TOKEN": "from-host"},
			absent:  canaries,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := envOf(t, tt.tool, declared.Options{Environ: basisEnviron(), PassEnv: tt.pass, CommandEnv: tt.command})
			for name, value := range tt.want {
				if v, ok := got[name]; !ok || v != value {
					t.Errorf("%s: got %q (set %t), want %q", name, v, ok, value)
				}
			}
			for _, name := range tt.absent {
				if _, ok := got[name]; ok {
					t.Errorf("%s reached the program", name)
				}
			}
			for _, v := range got {
				if strings.Contains(v, "canary-serve-token") {
					t.Errorf("basis's serve token reached the program under some name")
				}
			}
		})
	}
}

// A manifest cannot reach basis's own variables by placeholder either:
// that would hand a program BASIS_SERVE_TOKEN under another name. It is a
// load error naming the field and variable, never the value.
func TestBasisVariablePlaceholderRefused(t *testing.T) {
	for _, field := range []map[string]any{
		{"env": map[string]string{"T": "${BASIS_SERVE_TOKEN}"}},
		{"env": map[string]string{"T": "${UNSET_HERE:-${BASIS_SERVE_TOKEN}}"}},
		{"command": []string{"/usr/bin/env", "--token=${BASIS_SERVE_TOKEN}"}},
		{"cwd": "${basis_config_dir}"},
	} {
		body := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/usr/bin/env"}}
		for k, v := range field {
			body[k] = v
		}
		root := workspace(t, manifestOf(t, map[string]any{"t": body}))
		environ := append(basisEnviron(), "basis_config_dir=canary-lower")
		_, err := declared.Load(t.Context(), root, &declared.Options{Environ: environ})
		problems := problemsOf(t, err)
		if len(problems) != 1 || !errors.Is(problems[0], declared.ErrInvalidValue) || toolOf(problems[0]) != "t" ||
			!strings.Contains(problems[0].Error(), "names one of basis's own variables (BASIS_*)") {
			t.Errorf("%v: problems = %v", field, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "canary") || !strings.Contains(msg, "never handed to a program") {
			t.Errorf("message = %q", msg)
		}
	}
}

// The layering is as before: the manifest's env wins over the host's
// command environment and over what is inherited.
func TestManifestEnvWinsOverInherited(t *testing.T) {
	got := envOf(t, map[string]any{"env": map[string]string{"FOO": "from-manifest", "GITHUB_TOKEN": "literal"}},
		declared.Options{Environ: basisEnviron(), CommandEnv: []string{"FOO=from-host"}})
	if diff := cmp.Diff(map[string]string{"FOO": "from-manifest", "GITHUB_TOKEN": "literal"},
		map[string]string{"FOO": got["FOO"], "GITHUB_TOKEN": got["GITHUB_TOKEN"]}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A call whose context carries a trace context gives the program
// TRACEPARENT and TRACESTATE, over what it would inherit or its manifest
// sets; without one, the environment is what it was.
func TestProgramTraceContext(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const stale = "00-11111111111111111111111111111111-2222222222222222-01"
	tests := []struct {
		name                  string
		tc                    *contract.TraceContext
		environ               []string
		tool                  map[string]any
		wantParent, wantState string
		wantSet               bool
	}{
		{name: "none", environ: []string{"PATH=" + os.Getenv("PATH")}},
		{name: "none, inherited", environ: []string{"PATH=" + os.Getenv("PATH"), "TRACEPARENT=" + stale}, wantParent: stale, wantSet: true},
		{name: "carried", tc: &contract.TraceContext{Parent: parent, State: "v=1"}, environ: []string{"PATH=" + os.Getenv("PATH")},
			wantParent: parent, wantState: "v=1", wantSet: true},
		{name: "over inherited and manifest", tc: &contract.TraceContext{Parent: parent},
			environ: []string{"PATH=" + os.Getenv("PATH"), "TRACEPARENT=" + stale, "TRACESTATE=old=1"},
			tool:    map[string]any{"env": map[string]string{"TRACEPARENT": stale}}, wantParent: parent, wantSet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/usr/bin/env"}}
			for k, v := range tt.tool {
				body[k] = v
			}
			root := workspace(t, manifestOf(t, map[string]any{"env": body}))
			ctx := t.Context()
			if tt.tc != nil {
				ctx = contract.WithTraceContext(ctx, *tt.tc)
			}
			res, err := loadTool(t, root, &declared.Options{Environ: tt.environ}, "env").Execute(ctx, callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for line := range strings.SplitSeq(res.Text, "\n") {
				if name, value, ok := strings.Cut(line, "="); ok {
					got[name] = value
				}
			}
			p, set := got["TRACEPARENT"]
			if set != tt.wantSet || p != tt.wantParent || got["TRACESTATE"] != tt.wantState {
				t.Errorf("TRACEPARENT=%q (set %v) TRACESTATE=%q, want %q (set %v) %q", p, set, got["TRACESTATE"], tt.wantParent, tt.wantSet, tt.wantState)
			}
		})
	}
}
