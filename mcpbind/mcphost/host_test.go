//go:build unix

package mcphost_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// fakeHost is a workspace as Open sees it; confined records what its
// sandbox was asked.
type fakeHost struct {
	root, configDir string
	environ, pass   []string
	mu              sync.Mutex
	confined        []confineCall
}

func (h *fakeHost) Root() string      { return h.root }
func (h *fakeHost) ConfigDir() string { return h.configDir }
func (h *fakeHost) Environ() []string { return h.environ }
func (h *fakeHost) PassEnv() []string { return h.pass }
func (h *fakeHost) Sandbox() subprocess.Confiner {
	return func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.confined = append(h.confined, confineCall{Tool: tool, Network: network})
		return &subprocess.Confinement{Confine: func(*exec.Cmd) (func() error, func(), error) { return nil, func() {}, nil }}, nil
	}
}

// Open reads the host's config files, takes ${VAR}s from the host's
// environment (not the process's), passes a stdio server only what the
// host's pass_env lets through, and confines it by the host's sandbox.
func TestOpen(t *testing.T) {
	h := &fakeHost{root: t.TempDir(), configDir: t.TempDir(),
		environ: append([]string{"OPENHOST_TEST_VAR=from-the-host"}, canaryEnviron...), pass: []string{"GITHUB_TOKEN"}}
	data := `{"mcpServers": {"ts": {"command": ` + strconv.Quote(serverBin) + `, "args": ["-environ"], "env": {"FROM_VAR": "${OPENHOST_TEST_VAR}"}}}}`
	if err := os.WriteFile(filepath.Join(h.configDir, mcpbind.OperatorFileName), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	m := mcphost.Open(t.Context(), h, nil)
	t.Cleanup(func() { m.Close() })
	if err := m.StartAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, env := environOf(t, m, "ts")
	got := map[string]string{"FROM_VAR": env["FROM_VAR"], "GITHUB_TOKEN": env["GITHUB_TOKEN"], "AWS_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"]}
	// A value expanded from a ${VAR} is a secret, hidden in what the server
	// answers: that it is there shows it was found in the host's environment.
	want := map[string]string{"FROM_VAR": "[redacted]", "GITHUB_TOKEN": "canary-github", "AWS_SECRET_ACCESS_KEY": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server's environment (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]confineCall{{Tool: "mcp__ts", Network: true}}, h.confined); diff != "" {
		t.Errorf("the sandbox was asked (-want +got):\n%s", diff)
	}
}

// TrustWorkspace trusts the workspace's own .mcp.json and names its
// servers; it refuses one that links to another repository's, and says
// when there is none.
func TestTrustWorkspace(t *testing.T) {
	server := `{"mcpServers": {"ts": {"command": ` + strconv.Quote(serverBin) + `}}}`
	t.Run("trusted", func(t *testing.T) {
		root, conf := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(root, mcpbind.WorkspaceFileName), []byte(server), 0o600); err != nil {
			t.Fatal(err)
		}
		rec, servers, err := mcphost.TrustWorkspace(context.Background(), root, conf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ts"}, servers); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		cfg, err := mcpbind.Load(t.Context(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf)})
		if err != nil || len(cfg.Files) != 1 || cfg.Files[0].Trust != mcpbind.Trusted || cfg.Files[0].Path != rec.Path {
			t.Fatalf("after TrustWorkspace, Load = %+v, %v; want the file trusted", cfg, err)
		}
	})
	t.Run("a link to another repository's", func(t *testing.T) {
		root, other, conf := t.TempDir(), t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(other, mcpbind.WorkspaceFileName), []byte(server), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, mcpbind.WorkspaceFileName), filepath.Join(root, mcpbind.WorkspaceFileName)); err != nil {
			t.Fatal(err)
		}
		var outside *configfile.OutsideError
		if _, _, err := mcphost.TrustWorkspace(t.Context(), root, conf); !errors.As(err, &outside) {
			t.Fatalf("TrustWorkspace = %v; want a *configfile.OutsideError", err)
		}
		if _, err := os.Stat(filepath.Join(conf, mcphost.TrustFileName)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the trust store was written: %v", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		if _, _, err := mcphost.TrustWorkspace(t.Context(), t.TempDir(), t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("TrustWorkspace = %v; want fs.ErrNotExist", err)
		}
	})
}

func TestClientFiles(t *testing.T) {
	want := []string{"/repo/.mcp.json", "/conf/mcp.json", "/conf/mcp-trust.json"}
	if diff := cmp.Diff(want, mcphost.ClientFiles("/repo", "/conf")); diff != "" {
		t.Errorf("ClientFiles (-want +got):\n%s", diff)
	}
}

func TestMayBeServerTool(t *testing.T) {
	for _, tc := range []struct {
		tool, source string
		want         bool
	}{
		{"mcp__github__search", "", true},
		{"search", "/repo/.mcp.json", true},
		{"search", "/home/op/.config/basis/mcp.json", true},
		{"search", "/repo/.basis/tools.json", false},
		{"spawn", "builtin", false},
	} {
		if got := mcphost.MayBeServerTool(tc.tool, tc.source); got != tc.want {
			t.Errorf("MayBeServerTool(%q, %q) = %t; want %t", tc.tool, tc.source, got, tc.want)
		}
	}
}

// WorkspaceFile resolves the root's links even when the file is gone, so
// the path matches the one trust recorded.
func TestWorkspaceFile(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(resolved, mcpbind.WorkspaceFileName)
	for _, present := range []bool{false, true} {
		if present {
			if err := os.WriteFile(want, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := mcphost.WorkspaceFile(link); got != want {
			t.Errorf("present=%v: WorkspaceFile(%s) = %s, want %s", present, link, got, want)
		}
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if got, want := mcphost.WorkspaceFile(missing), filepath.Join(missing, mcpbind.WorkspaceFileName); got != want {
		t.Errorf("WorkspaceFile of a missing root = %s, want %s", got, want)
	}
}
