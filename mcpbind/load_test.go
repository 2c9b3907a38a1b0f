//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"github.com/basis-go/basis/configfile"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realDir is dir with symlinks resolved, as Load records paths.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadLayersAndShadows(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
			writeFile(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"shared": {"command": "ws"}, "wsonly": {"command": "w"}}}`)
			writeFile(t, filepath.Join(conf, "mcp.json"), `{"mcpServers": {"shared": {"command": "op"}, "oponly": {"url": "http://h"}}}`)
			ws, op := filepath.Join(root, ".mcp.json"), filepath.Join(conf, "mcp.json")
			trust := mcpbind.Untrusted
			if trusted {
				if _, err := mcphost.NewTrustStore(conf).Trust(context.Background(), ws); err != nil {
					t.Fatal(err)
				}
				trust = mcpbind.Trusted
			}
			cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf),
				Host: []mcpbind.ServerConfig{{Name: "oponly", Command: "host"}, {Name: "hostonly", Command: "h"}}})
			if err != nil {
				t.Fatal(err)
			}
			type row struct{ Name, Command, File, Origin string }
			rows := func(servers []mcpbind.ServerConfig) []row {
				var out []row
				for _, s := range servers {
					out = append(out, row{s.Name, s.Command, s.File, string(s.Origin)})
				}
				return out
			}
			// Only a trusted workspace file shadows the operator's server
			// of the same name; an untrusted one shadows nothing.
			shared, hidden := row{"shared", "op", op, "operator"}, row{"shared", "ws", ws, "workspace"}
			if trusted {
				shared, hidden = hidden, shared
			}
			want := []row{
				{"hostonly", "h", "", "host"},
				{"oponly", "", op, "operator"},
				shared,
				{"wsonly", "w", ws, "workspace"},
			}
			if diff := cmp.Diff(want, rows(cfg.Servers)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			wantShadowed := []row{{"oponly", "host", "", "host"}, hidden}
			if trusted {
				wantShadowed = []row{hidden, {"oponly", "host", "", "host"}}
			}
			if diff := cmp.Diff(wantShadowed, rows(cfg.Shadowed)); diff != "" {
				t.Errorf("shadowed (-want +got):\n%s", diff)
			}
			// A trusted file pins what its servers run from the
			// workspace: here, nothing.
			var pinned map[string]string
			if trusted {
				pinned = map[string]string{}
			}
			if diff := cmp.Diff([]mcpbind.ConfigFile{{Path: ws, Origin: mcpbind.OriginWorkspace, Trust: trust, Pinned: pinned},
				{Path: op, Origin: mcpbind.OriginOperator, Trust: mcpbind.Trusted}}, cfg.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadServerNamesThatSanitiseAlike(t *testing.T) {
	conf := realDir(t, t.TempDir())
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"mcpServers": {"a.b": {"command": "x"}, "a_b": {"command": "y"}}}`)
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
	if !errors.Is(err, mcpbind.ErrInvalidValue) || !strings.Contains(err.Error(), "server a_b") || !strings.Contains(err.Error(), "server a.b") {
		t.Fatalf("error = %v, want one naming both servers", err)
	}
	if len(cfg.Servers) != 1 {
		t.Errorf("servers = %d, want the first one kept", len(cfg.Servers))
	}
}

// TestUntrustedWorkspaceStartsNothing: a repository's .mcp.json runs
// nothing until the operator trusts that exact content.
func TestUntrustedWorkspaceStartsNothing(t *testing.T) {
	root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	marker := filepath.Join(t.TempDir(), "started")
	file := filepath.Join(root, ".mcp.json")
	writeFile(t, file, `{"mcpServers": {"repo": {"command": "`+serverBin+`", "args": ["-stubborn", "`+marker+`"]}}}`)
	ctx := context.Background()
	load := func() *mcpbind.Manager {
		cfg, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf)})
		if err != nil {
			t.Fatal(err)
		}
		m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{CloseGrace: 100 * time.Millisecond})
		t.Cleanup(func() { m.Close() })
		return m
	}

	m := load()
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	if err := m.Start(ctx, "repo"); !errors.Is(err, mcpbind.ErrUntrusted) {
		t.Errorf("Start = %v, want ErrUntrusted", err)
	}
	if got := m.Status()[0].String(); got != "untrusted: run basis mcp trust" {
		t.Errorf("status = %q", got)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("an untrusted server has tools")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the untrusted server started (marker: %v)", err)
	}

	store := mcphost.NewTrustStore(conf)
	rec, err := store.Trust(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Path != file || len(rec.SHA256) != 64 {
		t.Errorf("record = %+v", rec)
	}
	if info, err := os.Stat(store.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trust store mode: %v, %v", info.Mode(), err)
	}
	m = load()
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("StartAll after trust: %v", err)
	}
	if st := m.Status()[0]; st.State != mcpbind.StateConnected {
		t.Fatalf("status after trust = %v", st)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the trusted server did not start: %v", err)
	}
	m.Close()
	os.Remove(marker)

	// Any change to the file needs trusting again.
	writeFile(t, file, `{"mcpServers": {"repo": {"command": "`+serverBin+`", "args": ["-stubborn", "`+marker+`", "-page", "2"]}}}`)
	cfg, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf)})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Files[0].Trust; got != mcpbind.Changed {
		t.Errorf("trust after a change = %v, want changed", got)
	}
	m = load()
	if err := m.StartAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("a changed file's server started")
	}
}

func TestReadConfigRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, "is not a regular file (it is a named pipe); an MCP config must be one"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file (it is a directory); an MCP config must be one"},
		{"link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file (it is a character device); an MCP config must be one"},
		{"too large", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(16<<20 + 1); err != nil {
				t.Fatal(err)
			}
		}, "is larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := realDir(t, t.TempDir())
			path := filepath.Join(conf, "mcp.json")
			tt.setup(t, path)
			if resolved, err := filepath.EvalSymlinks(path); err == nil {
				path = resolved // the file is named as Load resolved it
			}
			done := make(chan error, 1)
			go func() {
				_, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
				done <- err
			}()
			select {
			case err := <-done:
				var ce *configfile.Error
				if !errors.Is(err, mcpbind.ErrUnreadable) || !errors.As(err, &ce) || ce.File != path {
					t.Errorf("Load = %v, want a *ConfigError for %s wrapping ErrUnreadable", err, path)
				}
				if diff := cmp.Diff(path+": "+tt.want, err.Error()); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Load hung")
			}
		})
	}
}

func TestLoadFollowsSymlinksToRegularFiles(t *testing.T) {
	conf, other := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	target := filepath.Join(other, "real.json")
	writeFile(t, target, `{"mcpServers": {"a": {"command": "x"}}}`)
	if err := os.Symlink(target, filepath.Join(conf, "mcp.json")); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].File != target {
		t.Errorf("servers = %+v, want one from %s", cfg.Servers, target)
	}
}

func TestLoadHonoursCancellation(t *testing.T) {
	conf := realDir(t, t.TempDir())
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"mcpServers": {}}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mcpbind.Load(ctx, &mcpbind.LoadOptions{ConfigDir: conf})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Load = %v, want context.Canceled", err)
	}
}

func TestUnsetVariableMakesOnlyThatServerUnavailable(t *testing.T) {
	bad := stdioServer("bad")
	bad.Env = mcpbind.NewValues(map[string]string{"T": "${MCPBIND_TEST_UNSET_VAR}"})
	m := newManager(t, &mcpbind.ManagerOptions{Lookup: func(string) (string, bool) { return "", false }}, bad, stdioServer("good"))
	if st := m.Status()[0]; st.State != mcpbind.StateUnavailable {
		t.Errorf("before any start, bad is %v; an unset variable is known without starting", st)
	}
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatalf("StartAll = %v; an unset variable is no start failure", err)
	}
	got := map[string]string{}
	for _, st := range m.Status() {
		got[st.Server] = st.String()
	}
	want := map[string]string{
		"bad":  "unavailable: env.T: variable MCPBIND_TEST_UNSET_VAR is not set and has no default; set it, or write ${MCPBIND_TEST_UNSET_VAR:-default}",
		"good": "connected, 13 tools",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	err := m.Start(context.Background(), "bad")
	var ce *configfile.Error
	var xe *configfile.ExpandError
	if !errors.Is(err, mcpbind.ErrUnsetVariable) || !errors.As(err, &ce) || !errors.As(err, &xe) || xe.Variable != "MCPBIND_TEST_UNSET_VAR" || ce.Field != "env.T" {
		t.Errorf("Start(bad) = %v (%+v)", err, ce)
	}
}

func TestOperatorFileWritableByOthersIsNotUsed(t *testing.T) {
	conf := realDir(t, t.TempDir())
	path := filepath.Join(conf, "mcp.json")
	writeFile(t, path, `{"mcpServers": {"a": {"command": "x", "trust_annotations": true}}}`)
	if err := os.Chmod(path, 0o664); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
	if !errors.Is(err, mcpbind.ErrUnreadable) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Errorf("Load = %v, want a refusal saying how to fix it", err)
	}
	if len(cfg.Servers) != 0 {
		t.Errorf("servers = %v, want none from a group-writable file", cfg.Servers)
	}
}
