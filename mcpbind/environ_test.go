//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/basis-go/basis/mcpbind/mcphost"
)

// canaryEnviron is an environment basis might run in: the ordinary
// variables, basis's own, and credentials, each credential a canary.
var canaryEnviron = []string{
	"PATH=/usr/bin:/bin", "HOME=/home/operator", "LANG=C.UTF-8", "FOO=bar",
	"BASIS_SERVE_TOKEN=canary-serve-token", "BASIS_CONFIG_DIR=/home/operator/.config/basis",
	"AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-github", "DB_PASSWORD=canary-db",
	"SSH_AUTH_SOCK=/tmp/canary-agent.sock",
}

var canaryNames = []string{"BASIS_SERVE_TOKEN", "BASIS_CONFIG_DIR", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SSH_AUTH_SOCK"}

// lookupIn looks a ${VAR} up in environ.
func lookupIn(environ []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, e := range environ {
			if k, v, ok := strings.Cut(e, "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
}

// environOf calls the environ tool of the server and returns the
// directory the server runs in and its environment.
func environOf(t *testing.T, m *mcpbind.Manager, server string) (string, map[string]string) {
	t.Helper()
	res, err := call(t, tool(t, m, server, "environ"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	cwd, env, ok := testserver.ParseEnviron(res.Text)
	if !ok {
		t.Fatalf("environ answered %q", res.Text)
	}
	return cwd, env
}

// A stdio server inherits the ordinary environment, but neither basis's
// own variables nor credentials unless its env names them or the
// operator passes them; placeholders still read the whole environment.
func TestStdioServerEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string // the server's "env"
		opts    *mcpbind.ManagerOptions
		process []string // set in this process's environment, for nil Env
		want    map[string]string
		absent  []string
	}{
		{
			name:   "nothing named",
			opts:   &mcpbind.ManagerOptions{Env: canaryEnviron},
			want:   map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/operator", "LANG": "C.UTF-8", "FOO": "bar"},
			absent: canaryNames,
		},
		{
			name: "the server's env names GITHUB_TOKEN",
			env:  map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
			opts: &mcpbind.ManagerOptions{Env: canaryEnviron},
			// A value the server's env expands is a secret, cut from
			// what the server answers: it is there, and hidden.
			want:   map[string]string{"GITHUB_TOKEN": "[redacted]", "FOO": "bar"},
			absent: []string{"BASIS_SERVE_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "SSH_AUTH_SOCK"},
		},
		{
			name:   "the operator passes a name and a pattern",
			opts:   &mcpbind.ManagerOptions{Env: canaryEnviron, PassEnv: []string{"DB_PASSWORD", "SSH_*"}},
			want:   map[string]string{"DB_PASSWORD": "canary-db", "SSH_AUTH_SOCK": "/tmp/canary-agent.sock"},
			absent: []string{"BASIS_SERVE_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"},
		},
		{
			name:   "passing everything never passes basis's own",
			opts:   &mcpbind.ManagerOptions{Env: canaryEnviron, PassEnv: []string{"*"}},
			want:   map[string]string{"GITHUB_TOKEN": "canary-github"},
			absent: []string{"BASIS_SERVE_TOKEN", "BASIS_CONFIG_DIR"},
		},
		{
			name:    "nil Env is this process's, filtered the same way",
			process: []string{"BASIS_SERVE_TOKEN=canary-serve-token", "GITHUB_TOKEN=canary-github", "DB_PASSWORD=canary-db", "MCPBIND_TEST_FOO=bar"},
			want:    map[string]string{"MCPBIND_TEST_FOO": "bar"},
			absent:  []string{"BASIS_SERVE_TOKEN", "GITHUB_TOKEN", "DB_PASSWORD"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range tt.process {
				k, v, _ := strings.Cut(e, "=")
				t.Setenv(k, v)
			}
			if tt.opts != nil && tt.opts.Env != nil {
				tt.opts.Lookup = lookupIn(tt.opts.Env)
			}
			s := stdioServer("s", "-environ")
			if tt.env != nil {
				s.Env = mcpbind.NewValues(tt.env)
			}
			_, got := environOf(t, newManager(t, tt.opts, s), "s")
			for name, value := range tt.want {
				if v, ok := got[name]; !ok || v != value {
					t.Errorf("%s: got %q (set %t), want %q", name, v, ok, value)
				}
			}
			for _, name := range tt.absent {
				if _, ok := got[name]; ok {
					t.Errorf("%s reached the server", name)
				}
			}
		})
	}
}

// A ${BASIS_...} placeholder would hand a server basis's own variable
// under another name: it is a problem of its server, in a file and from a
// host alike, naming the field and variable.
func TestBasisVariablePlaceholderRefused(t *testing.T) {
	conf := realDir(t, t.TempDir())
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"mcpServers": {
		"a": {"command": "x", "env": {"T": "${BASIS_SERVE_TOKEN}"}},
		"b": {"command": "x", "args": ["--config=${UNSET:-${basis_config_dir}}"]},
		"ok": {"command": "x"}
	}}`)
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
	if err == nil || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "ok" {
		t.Fatalf("Load = %v, %v; want a and b left out", cfg, err)
	}
	for _, want := range []string{"server a: env.T: ${BASIS_SERVE_TOKEN} names one of basis's own variables", "server b: args[0]: ${basis_config_dir}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, mcpbind.ErrInvalidValue) {
		t.Errorf("%v does not wrap ErrInvalidValue", err)
	}

	host := stdioServer("h")
	host.Env = mcpbind.NewValues(map[string]string{"T": "${BASIS_SERVE_TOKEN}"})
	if _, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Host: []mcpbind.ServerConfig{host}}); !errors.Is(err, mcpbind.ErrInvalidValue) ||
		!strings.Contains(err.Error(), "env.T") {
		t.Errorf("a host's server: %v", err)
	}
}

// cwdWorkspace is a trusted workspace at base/home/repo whose .mcp.json
// has the stdio server "s" (the test server, reporting its environment)
// with the given cwd, and base/canary-outside beside it.
type cwdWorkspace struct {
	root, conf, outside, marker string
}

func newCWDWorkspace(t *testing.T, cwd string, operator bool) *cwdWorkspace {
	t.Helper()
	base := realDir(t, t.TempDir())
	w := &cwdWorkspace{root: filepath.Join(base, "home", "repo"), conf: filepath.Join(base, "config"),
		outside: filepath.Join(base, "canary-outside"), marker: filepath.Join(base, "started")}
	for _, d := range []string{w.root, w.conf, w.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// -stubborn writes the marker when the server starts.
	server := `{"mcpServers": {"s": {"command": "` + serverBin + `", "args": ["-environ", "-stubborn", "` + w.marker + `"], "cwd": "` + cwd + `"}}}`
	if operator {
		writeFile(t, filepath.Join(w.conf, "mcp.json"), server)
		return w
	}
	file := filepath.Join(w.root, ".mcp.json")
	writeFile(t, file, server)
	if _, err := mcphost.NewTrustStore(w.conf).Trust(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *cwdWorkspace) manager(t *testing.T) *mcpbind.Manager {
	t.Helper()
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: w.root, ConfigDir: w.conf, Trust: mcphost.NewTrustStore(w.conf)})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + w.outside}
	m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{Env: env, Lookup: lookupIn(env), CloseGrace: 100 * time.Millisecond})
	t.Cleanup(func() { m.Close() })
	return m
}

func (w *cwdWorkspace) started() bool {
	_, err := os.Stat(w.marker)
	return err == nil
}

func (w *cwdWorkspace) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(w.root, rel)); err != nil {
		t.Fatal(err)
	}
}

// checkOutside checks err refuses the server for a cwd outside the
// workspace, naming file, server and field, and quoting no path.
func checkOutside(t *testing.T, what string, err error, w *cwdWorkspace) {
	t.Helper()
	var ce *configfile.Error
	if !errors.Is(err, mcpbind.ErrOutsideWorkspace) || !errors.As(err, &ce) {
		t.Errorf("%s: %v, want a ConfigError wrapping ErrOutsideWorkspace", what, err)
		return
	}
	if ce.File != filepath.Join(w.root, ".mcp.json") || ce.Subject != "server s" || ce.Field != "cwd" {
		t.Errorf("%s: %+v does not name the file, server and field", what, ce)
	}
	for _, value := range []string{w.outside, "canary", "../", "/etc"} {
		if strings.Contains(err.Error(), value) {
			t.Errorf("%s: %q quotes the value", what, err)
		}
	}
}

// A workspace's stdio server whose cwd leads outside the workspace is
// unavailable — known before any start — and never starts.
func TestWorkspaceServerCwdOutside(t *testing.T) {
	tests := []struct {
		name  string
		cwd   string
		setup func(t *testing.T, w *cwdWorkspace)
	}{
		{name: "dot-dot", cwd: "../../canary-outside"},
		{name: "dot-dot to /etc", cwd: "../../../../../../../../../../etc"},
		{name: "absolute path outside", cwd: "/etc"},
		{name: "a link pointing out", cwd: "link", setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, w.outside, "link") }},
		{name: "HOME placeholder expanding outside", cwd: "${HOME}"},
		{name: "a missing directory under a link out", cwd: "link/missing", setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, w.outside, "link") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newCWDWorkspace(t, tt.cwd, false)
			if tt.setup != nil {
				tt.setup(t, w)
			}
			m := w.manager(t)
			st := m.Status()[0]
			if st.State != mcpbind.StateUnavailable || !strings.HasPrefix(st.Reason, "cwd: leads outside the workspace") {
				t.Errorf("status before any start = %v", st)
			}
			checkOutside(t, "Start", m.Start(context.Background(), "s"), w)
			if err := m.StartAll(context.Background()); err != nil {
				t.Errorf("StartAll = %v; an unavailable server is no start failure", err)
			}
			cfg, _ := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: w.root, ConfigDir: w.conf, Trust: mcphost.NewTrustStore(w.conf)})
			checkOutside(t, "Check", cfg.Servers[0].Check(lookupIn([]string{"HOME=" + w.outside})), w)
			if w.started() {
				t.Error("the server started")
			}
		})
	}
}

// The operator's own mcp.json may name any directory; a workspace cwd
// that stays inside, through a link too, runs the server in the real
// directory.
func TestServerCwdThatMayBeUsed(t *testing.T) {
	tests := []struct {
		name     string
		cwd      string
		operator bool
		setup    func(t *testing.T, w *cwdWorkspace)
		want     string // $ROOT, $OUTSIDE
	}{
		// Literal: a placeholder's value is cut from what the server
		// answers, the directory included.
		{name: "operator: outside", cwd: "../canary-outside", operator: true, want: "$OUTSIDE"},
		{name: "workspace: none", cwd: "", want: "$ROOT"},
		{name: "workspace: a link that stays inside", cwd: "in", want: "$ROOT/sub", setup: func(t *testing.T, w *cwdWorkspace) {
			os.Mkdir(filepath.Join(w.root, "sub"), 0o755)
			w.symlink(t, "sub", "in")
		}},
		{name: "workspace: up and back in", cwd: "../repo/sub", want: "$ROOT/sub", setup: func(t *testing.T, w *cwdWorkspace) {
			os.Mkdir(filepath.Join(w.root, "sub"), 0o755)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newCWDWorkspace(t, tt.cwd, tt.operator)
			if tt.setup != nil {
				tt.setup(t, w)
			}
			cwd, _ := environOf(t, w.manager(t), "s")
			if want := strings.NewReplacer("$ROOT", w.root, "$OUTSIDE", w.outside).Replace(tt.want); cwd != want {
				t.Errorf("the server runs in %s, want %s", cwd, want)
			}
		})
	}
}

// A program the sandbox lets write in the workspace can replace the
// server's cwd with a link after the Manager was made, or while the
// server runs: the cwd is resolved at every start, and a restart into a
// directory that now leads out is refused.
func TestWorkspaceServerCwdSwappedForALink(t *testing.T) {
	swap := func(t *testing.T, w *cwdWorkspace) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(w.root, "work")); err != nil {
			t.Fatal(err)
		}
		w.symlink(t, w.outside, "work")
	}
	t.Run("before the first start", func(t *testing.T) {
		w := newCWDWorkspace(t, "work", false)
		os.Mkdir(filepath.Join(w.root, "work"), 0o755)
		m := w.manager(t)
		if st := m.Status()[0]; st.State != mcpbind.StateNotStarted {
			t.Fatalf("status = %v", st)
		}
		swap(t, w)
		checkOutside(t, "Start", m.Start(context.Background(), "s"), w)
		if st := m.Status()[0]; st.State != mcpbind.StateUnavailable {
			t.Errorf("status after the refused start = %v", st)
		}
		if w.started() {
			t.Error("the server started")
		}
	})
	t.Run("before a restart", func(t *testing.T) {
		w := newCWDWorkspace(t, "work", false)
		os.Mkdir(filepath.Join(w.root, "work"), 0o755)
		m := w.manager(t)
		echo := tool(t, m, "s", "echo")
		if _, err := call(t, tool(t, m, "s", "crash"), `{}`); !errors.Is(err, mcpbind.ErrServerDied) {
			t.Fatalf("crash: %v", err)
		}
		if err := os.Remove(w.marker); err != nil {
			t.Fatal(err)
		}
		swap(t, w)
		_, err := call(t, echo, `{}`)
		checkOutside(t, "the call that restarts", err, w)
		if w.started() {
			t.Error("the server restarted")
		}
	})
	t.Run("missing, then a link", func(t *testing.T) {
		w := newCWDWorkspace(t, "work", false)
		m := w.manager(t)
		if st := m.Status()[0]; st.State != mcpbind.StateNotStarted {
			t.Fatalf("a missing cwd inside the workspace may be made later: %v", st)
		}
		err := m.Start(context.Background(), "s")
		if !errors.Is(err, mcpbind.ErrStart) || !strings.Contains(err.Error(), "(cwd in "+filepath.Join(w.root, ".mcp.json")+") does not exist") {
			t.Errorf("Start with the cwd missing = %v", err)
		}
		w.symlink(t, w.outside, "work")
		checkOutside(t, "Start", m.Start(context.Background(), "s"), w)
		if w.started() {
			t.Error("the server started")
		}
	})
}
