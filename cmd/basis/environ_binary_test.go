//go:build unix && !nomcp

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// binaryCanaries are credentials, and basis's own variables, in the
// environment the basis binary runs in: no program it starts may see any
// of them unless something names it.
var binaryCanaries = map[string]string{
	"BASIS_SERVE_TOKEN":     "canary-serve-token-51",
	"AWS_SECRET_ACCESS_KEY": "canary-aws-52",
	"GITHUB_TOKEN":          "canary-github-53",
	"DB_PASSWORD":           "canary-db-54",
	"SSH_AUTH_SOCK":         "/tmp/canary-agent-55.sock",
}

// environRun is one workspace for the basis binary, with a program of
// every kind basis starts, each able to report its environment: a
// declared tool running /usr/bin/env, one naming GITHUB_TOKEN in its env,
// an MCP stdio server (the operator's), spawn's commands, and a hook
// approver that writes its environment to a file.
type environRun struct {
	ws, config, hookOut, hook string
}

func newEnvironRun(t *testing.T, sandboxJSON string) *environRun {
	t.Helper()
	dir := t.TempDir()
	r := &environRun{ws: filepath.Join(dir, "ws"), config: filepath.Join(dir, "config"), hookOut: filepath.Join(dir, "hook-env")}
	write(t, filepath.Join(r.ws, ".basis/tools.json"), `{"schema": 1, "tools": {
		"env": {"description": "Print the environment.", "input_schema": {"type": "object"}, "command": ["/usr/bin/env"]},
		"github": {"description": "Print the environment, with a token.", "input_schema": {"type": "object"}, "command": ["/usr/bin/env"],
			"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}
	}}`)
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"t": {"command": %q, "args": ["-environ"]}}}`, mcpTestServerBinary))
	if sandboxJSON != "" {
		write(t, filepath.Join(r.config, "sandbox.json"), sandboxJSON)
	}
	r.hook = filepath.Join(dir, "hook.sh")
	write(t, r.hook, "#!/bin/sh\nenv > '"+r.hookOut+"'\necho '{\"decision\": \"allow\"}'\n")
	if err := os.Chmod(r.hook, 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// call runs `basis call NAME INPUT` approved by the hook, in an
// environment holding the canaries and the ordinary variables, and
// returns its stdout.
func (r *environRun) call(t *testing.T, name, input string) string {
	t.Helper()
	cmd := exec.Command(basisBinary, "-C", r.ws, "call", name, input, "--approve", "hook:"+r.hook)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.ws, "LANG=C.UTF-8", "FOO=bar", "BASIS_CONFIG_DIR=" + r.config}
	for name, value := range binaryCanaries {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("basis call %s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// varsOf reads NAME=value lines.
func varsOf(text string) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			vars[name] = value
		}
	}
	return vars
}

// Through the built binary: the declared tool, the one that names a
// token, an MCP stdio server, a spawn command and the hook that approves
// them each get the ordinary environment and none of basis's variables
// or credentials, but what their own config names — and, with the
// operator's pass_env, the names it lists.
func TestBinaryProgramsInheritNoSecret(t *testing.T) {
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Fatalf("this test runs /usr/bin/env: %v", err)
	}
	tests := []struct {
		name    string
		sandbox string
		passed  []string // canaries every program gets
	}{
		{name: "no operator setting"},
		{name: "the operator passes DB_PASSWORD and SSH_*", sandbox: `{"schema": 1, "pass_env": ["DB_PASSWORD", "SSH_*"]}`,
			passed: []string{"DB_PASSWORD", "SSH_AUTH_SOCK"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newEnvironRun(t, tt.sandbox)
			programs := []struct {
				what, tool, input string
				named             []string // canaries its own config names
			}{
				{what: "a declared tool", tool: "env", input: `{}`},
				{what: "a declared tool naming GITHUB_TOKEN", tool: "github", input: `{}`, named: []string{"GITHUB_TOKEN"}},
				{what: "an MCP stdio server", tool: "mcp__t__environ", input: `{}`},
				{what: "a spawn command", tool: "spawn", input: `{"input": "!env"}`},
			}
			for _, p := range programs {
				out := r.call(t, p.tool, p.input)
				hookEnv, err := os.ReadFile(r.hookOut)
				if err != nil {
					t.Fatalf("%s: the hook was not asked: %v", p.what, err)
				}
				for who, vars := range map[string]map[string]string{p.what: varsOf(out), "the hook approving " + p.what: varsOf(string(hookEnv))} {
					named := p.named
					// A spawn command keeps its fixed allowlist: the
					// operator's pass_env is not for model-written
					// commands.
					spawned := p.tool == "spawn" && who == p.what
					if who != p.what {
						named = nil
					}
					for name, value := range binaryCanaries {
						got, ok := vars[name]
						passed := slices.Contains(named, name) || slices.Contains(tt.passed, name) && !spawned
						switch {
						case passed && got != value:
							t.Errorf("%s: %s = %q (set %t), want it passed", who, name, got, ok)
						case !passed && ok:
							t.Errorf("%s: %s reached it", who, name)
						}
					}
					for _, name := range []string{"PATH", "HOME", "LANG"} {
						if vars[name] == "" {
							t.Errorf("%s: the ordinary %s did not reach it", who, name)
						}
					}
					if !spawned && vars["FOO"] != "bar" {
						t.Errorf("%s: FOO did not reach it", who)
					}
					for name := range vars {
						if strings.HasPrefix(name, "BASIS_") {
							t.Errorf("%s: basis's own %s reached it", who, name)
						}
					}
				}
				if err := os.Remove(r.hookOut); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Through the built binary, sandbox on: a repository's manifest or
// .mcp.json whose cwd leads out of the workspace — by "..", or by a link
// it ships — must not make that directory writable. basis check reports
// each (exit 2), and the calls are refused (exit 3) with nothing written
// outside and no server started.
func TestBinaryWorkspaceCwdCannotLeaveTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	ws, config, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "config"), filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(outside, "server-started") // the server may write its cwd
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {
		"dotdot": {"description": "d", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "echo x > pwned-dotdot"], "cwd": "../outside"},
		"link": {"description": "d", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "echo x > pwned-link"], "cwd": "link"}
	}}`)
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"s": {"command": %q, "args": ["-stubborn", %q], "cwd": "../outside"}}}`,
		mcpTestServerBinary, marker))
	basis := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(basisBinary, append([]string{"-C", ws}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "BASIS_CONFIG_DIR=" + config}
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != want {
			t.Errorf("basis %s: exit %d, want %d:\n%s", strings.Join(args, " "), got, want, out)
		}
		return string(out)
	}
	basis(exitOK, "mcp", "trust")
	out := basis(exitUsage, "check")
	for _, want := range []string{"dotdot is unavailable: its cwd (", "link is unavailable: its cwd (", "server s: cwd: leads outside the workspace"} {
		if !strings.Contains(out, want) {
			t.Errorf("basis check does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, outside) {
		t.Errorf("basis check quotes the directory:\n%s", out)
	}
	basis(exitRefused, "call", "dotdot", "--approve", "allow")
	basis(exitRefused, "call", "link", "--approve", "allow")
	basis(exitRefused, "call", "mcp__s__echo", "--approve", "allow")
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s was written outside the workspace", e.Name())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the workspace's MCP server started")
	}
}
