//go:build unix

package mcphost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
)

// serverBin is mcpbind's MCP test server, built once for every test.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if serverBin, err = testserver.BuildProgram(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// canaryEnviron is an environment basis might run in: the ordinary
// variables, basis's own, and credentials, each credential a canary.
var canaryEnviron = []string{
	"PATH=/usr/bin:/bin", "HOME=/home/operator", "LANG=C.UTF-8",
	"BASIS_SERVE_TOKEN=canary-serve-token", "AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-github",
}

// confineCall is what a Sandbox hook was asked.
type confineCall struct {
	Tool    string
	Network bool
}

// environOf calls the environ tool of the server and returns the
// directory the server runs in and its environment.
func environOf(t *testing.T, m *mcpbind.Manager, server string) (string, map[string]string) {
	t.Helper()
	tools, err := m.ServerTools(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Result
	for _, tl := range tools {
		if tl.Descriptor().Name == mcpbind.ToolName(server, "environ") {
			res, err = tl.Execute(context.Background(), contract.Call{ID: "1", Input: []byte(`{}`)})
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	cwd, env, ok := testserver.ParseEnviron(res.Text)
	if !ok {
		t.Fatalf("environ answered %q", res.Text)
	}
	return cwd, env
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// realDir returns dir with its links resolved, as trust records paths.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
