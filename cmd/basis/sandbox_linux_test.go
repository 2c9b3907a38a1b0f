//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

// sandboxWorld is a workspace, a HOME outside it, a directory a symlink in
// the workspace points to, and two config directories: the default one
// (no sandbox.json) and one whose sandbox.json gives spawn the network.
type sandboxWorld struct {
	ws, home, outside   string
	config, configNet   string
	probe, audit        string
	listener            net.Listener
	listenAddr, outTemp string
}

func newSandboxWorld(t *testing.T, probe string) *sandboxWorld {
	t.Helper()
	w := &sandboxWorld{ws: t.TempDir(), home: t.TempDir(), outside: t.TempDir(), probe: probe}
	w.config = filepath.Join(w.home, ".config", "basis")
	w.configNet = filepath.Join(w.home, "config-net")
	w.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	write(t, filepath.Join(w.configNet, "sandbox.json"), `{"schema": 1, "spawn": {"network": true}}`)
	write(t, filepath.Join(w.ws, ".basis", "tools.json"), fmt.Sprintf(`{"schema": 1, "tools": {
		"probe": {"description": "Probes the sandbox.", "input_schema": {"type": "object"}, "command": [%q]},
		"probe_net": {"description": "Probes the sandbox, with the network.", "input_schema": {"type": "object"},
			"command": [%q], "network": true, "side_effect": "external"}}}`, probe, probe))
	if err := os.Symlink(w.outside, filepath.Join(w.ws, "out")); err != nil {
		t.Fatal(err)
	}
	// A file in /tmp itself, beside (not inside) any per-call directory.
	w.outTemp = filepath.Join(os.TempDir(), "basis-sandbox-test-"+strconv.Itoa(os.Getpid())+"-"+filepath.Base(w.ws))
	t.Cleanup(func() { os.Remove(w.outTemp) })

	// A listener on the host's loopback, outside any sandbox.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	w.listener, w.listenAddr = l, l.Addr().String()
	return w
}

// call runs the basis binary on a probe: through the declared tool, or
// through a spawn command; with the network or without. It returns what
// basis printed and its exit status.
func (w *sandboxWorld) call(t *testing.T, kind string, network bool, args ...string) (string, int) {
	t.Helper()
	config := w.config
	var tool, input string
	switch kind {
	case "declared":
		tool = "probe"
		if network {
			tool = "probe_net"
		}
		raw, _ := json.Marshal(map[string]any{"args": args})
		input = string(raw)
	case "spawn":
		tool = "spawn"
		if network {
			config = w.configNet
		}
		raw, _ := json.Marshal(map[string]string{"input": "!" + w.probe + " " + strings.Join(args, " ")})
		input = string(raw)
	}
	cmd := exec.Command(basisBinary, "-C", w.ws, "call", tool, input, "--approve", "allow", "--audit", w.audit)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "BASIS_CONFIG_DIR=" + config}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running basis: %v", err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestSandboxConfinesDeclaredToolsAndSpawnCommands runs the basis binary,
// sandboxed by default, and tries from a declared tool and from a spawn
// command each thing the sandbox must allow or forbid.
func TestSandboxConfinesDeclaredToolsAndSpawnCommands(t *testing.T) {
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		t.Skipf("this machine cannot sandbox: %v", err)
	}
	probe := filepath.Join(t.TempDir(), "sbprobe")
	build := exec.Command("go", "build", "-o", probe, "./testdata/sbprobe")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building sbprobe: %v", err)
	}

	for _, kind := range []string{"declared", "spawn"} {
		t.Run(kind, func(t *testing.T) {
			w := newSandboxWorld(t, probe)
			tests := []struct {
				name    string
				network bool
				args    []string
				allowed bool
				says    string // in the output: the error the program saw
				created string // a file that must exist afterwards, or not
			}{
				{name: "write inside the workspace", args: []string{"write", filepath.Join(w.ws, "inside")}, allowed: true, created: filepath.Join(w.ws, "inside")},
				{name: "write to HOME", args: []string{"write", filepath.Join(w.home, "owned")}, says: "permission denied", created: filepath.Join(w.home, "owned")},
				{name: "write to /tmp outside the per-call directory", args: []string{"write", w.outTemp}, says: "permission denied", created: w.outTemp},
				{name: "write through a symlink out of the workspace", args: []string{"write", filepath.Join(w.ws, "out", "escaped")}, says: "permission denied", created: filepath.Join(w.outside, "escaped")},
				// The operator's own builds read the user cache directory:
				// sandboxed programs get one of basis's own instead.
				{name: "write to the user cache directory", args: []string{"write", filepath.Join(w.home, ".cache", "built")}, says: "permission denied", created: filepath.Join(w.home, ".cache", "built")},
				{name: "write to the sandbox's cache", args: []string{"cache", "built"}, allowed: true},
				{name: "rewrite the workspace's tools", args: []string{"write", filepath.Join(w.ws, ".basis", "tools.json")}, says: "read-only file system"},
				{name: "connect to a host listener without the network", args: []string{"connect", w.listenAddr}},
				{name: "connect to a host listener with the network", network: true, args: []string{"connect", w.listenAddr}, allowed: true},
				{name: "a grandchild cannot write to HOME", args: []string{"child", "write", filepath.Join(w.home, "by-grandchild")}, says: "permission denied", created: filepath.Join(w.home, "by-grandchild")},
				{name: "a grandchild writes inside the workspace", args: []string{"child", "write", filepath.Join(w.ws, "by-grandchild")}, allowed: true, created: filepath.Join(w.ws, "by-grandchild")},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out, code := w.call(t, kind, tt.network, tt.args...)
					if tt.allowed {
						if code != 0 || !strings.Contains(out, "ok: ") {
							t.Fatalf("exit %d, want 0; output:\n%s", code, out)
						}
					} else {
						if code == 0 || strings.Contains(out, "ok: ") {
							t.Fatalf("exit %d: the sandbox let it through; output:\n%s", code, out)
						}
						if !strings.Contains(out, tt.says) {
							t.Errorf("output does not say %q:\n%s", tt.says, out)
						}
					}
					if tt.created != "" {
						if _, err := os.Lstat(tt.created); (err == nil) != tt.allowed {
							t.Errorf("%s exists: %t, want %t", tt.created, err == nil, tt.allowed)
						}
					}
				})
			}

			t.Run("the per-call TMPDIR is writable and gone afterwards", func(t *testing.T) {
				out, code := w.call(t, kind, false, "tmpdir")
				if code != 0 {
					t.Fatalf("exit %d; output:\n%s", code, out)
				}
				_, rest, _ := strings.Cut(out, "ok: ")
				dir, _, _ := strings.Cut(rest, "\n")
				if !filepath.IsAbs(dir) || dir == filepath.Clean(os.TempDir()) {
					t.Fatalf("TMPDIR %q is not a per-call directory", dir)
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the per-call TMPDIR %s is still there after the call (%v)", dir, err)
				}
			})

			t.Run("the audited subject shows the sandbox", func(t *testing.T) {
				wsReal, err := filepath.EvalSymlinks(w.ws)
				if err != nil {
					t.Fatal(err)
				}
				caches, err := filepath.Glob(filepath.Join(w.home, ".cache", "basis", "sandbox", "*"))
				if err != nil || len(caches) != 1 {
					t.Fatalf("the sandbox's caches: %q (%v), want one for the workspace", caches, err)
				}
				cacheReal, err := filepath.EvalSymlinks(caches[0])
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(w.audit)
				if err != nil {
					t.Fatal(err)
				}
				type described struct {
					Mode      string   `json:"mode"`
					Network   string   `json:"network"`
					Write     []string `json:"write"`
					Protected []string `json:"protected"`
				}
				var got []described
				for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					var rec struct {
						Event   string `json:"event"`
						Subject struct {
							Sandbox *described `json:"sandbox"`
						} `json:"subject"`
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatal(err)
					}
					if rec.Event != "end" {
						continue // each call's start says the same
					}
					if rec.Subject.Sandbox == nil {
						t.Fatalf("an audit record's subject has no sandbox: %s", line)
					}
					got = append(got, *rec.Subject.Sandbox)
				}
				var want []described
				write := []string{sandbox.TempDirPlaceholder, cacheReal, wsReal}
				if cacheReal > wsReal {
					write[1], write[2] = wsReal, cacheReal
				}
				protected := []string{filepath.Join(wsReal, ".basis")}
				for _, tt := range tests {
					d := described{Mode: "workspace-write", Network: "none", Write: write, Protected: protected}
					if tt.network {
						d.Network = "allowed"
					}
					want = append(want, d)
				}
				want = append(want, described{Mode: "workspace-write", Network: "none", Write: write, Protected: protected}) // tmpdir
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the audited subjects' sandboxes (-want +got):\n%s", diff)
				}
			})
		})
	}
}
