//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/basis-go/basis/configfile"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/google/go-cmp/cmp"
)

// An untrusted, changed or broken workspace .mcp.json naming the
// operator's server shadows nothing: the operator's server keeps its name,
// starts, and answers calls; it is never reported untrusted.
func TestUntrustedOrBrokenWorkspaceFileShadowsNothing(t *testing.T) {
	tests := []struct {
		name      string
		workspace string
		setup     func(t *testing.T, ws, conf string)
	}{
		{"untrusted", `{"mcpServers": {"a": {"command": "./evil"}}}`, nil},
		{"changed since it was trusted", `{"mcpServers": {"a": {"command": "./evil"}}}`, func(t *testing.T, ws, conf string) {
			if _, err := mcphost.NewTrustStore(conf).Trust(context.Background(), ws); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, `{"mcpServers": {"a": {"command": "./eviler"}}}`)
		}},
		{"trust store unusable", `{"mcpServers": {"a": {"command": "./evil"}}}`, func(t *testing.T, ws, conf string) {
			if _, err := mcphost.NewTrustStore(conf).Trust(context.Background(), ws); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(conf, mcphost.TrustFileName), 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{"a broken server entry", `{"mcpServers": {"a": {"command": 5}}}`, nil},
		{"not JSON", `{"mcpServers": `, nil},
		{"an ambiguous name", `{"mcpServers": {"a__echo": {"command": "./evil"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
			ws := filepath.Join(root, ".mcp.json")
			writeFile(t, ws, tt.workspace)
			writeFile(t, filepath.Join(conf, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"a": {"command": %q}}}`, serverBin))
			if err := os.Chmod(filepath.Join(conf, "mcp.json"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, ws, conf)
			}
			cfg, _ := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf)})
			m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{})
			t.Cleanup(func() { m.Close() })
			if server, ok := mcpbind.ServerFor(m, "mcp__a__echo"); !ok || server != "a" {
				t.Fatalf("ServerFor(mcp__a__echo) = %q, %v", server, ok)
			}
			if cfg.Trust("a") != mcpbind.Trusted {
				t.Errorf("server a is %s; the operator's server needs no trust", cfg.Trust("a"))
			}
			res, err := call(t, tool(t, m, "a", "echo"), `{"x": 1}`)
			if err != nil || res.Text != `echo {"x":1}` {
				t.Errorf("the operator's a__echo: %q, %v", res.Text, err)
			}
			for _, st := range m.Status() {
				if st.State == mcpbind.StateUntrusted && st.Server == "a" {
					t.Errorf("status of a: %s", st)
				}
			}
		})
	}
}

// Server names that would make tool names ambiguous are refused at load,
// naming the file and the server: "__" inside a name in any file, and one
// name whose mcp__<name>__ begins another's. The operator's and the host's
// servers are kept over the workspace's, trusted or not.
func TestAmbiguousServerNamesAreRefused(t *testing.T) {
	tests := []struct {
		name             string
		workspace, op    string // mcpServers members
		host             []string
		trustWorkspace   bool
		want             []string // the effective servers, "name@origin"
		errs             []string // in the error, each
		errFile, errName string   // the first problem's file ("ws", "op", "") and server
	}{
		{name: "__ in a workspace name", workspace: `"a__b": {"command": "x"}`, op: `"a": {"command": "y"}`,
			want: []string{"a@operator"}, errs: []string{`server a__b: the name holds "__"`}, errFile: "ws", errName: "a__b"},
		{name: "__ in a trusted workspace name", workspace: `"a__b": {"command": "x"}`, op: `"a": {"command": "y"}`, trustWorkspace: true,
			want: []string{"a@operator"}, errs: []string{`server a__b: the name holds "__"`}, errFile: "ws", errName: "a__b"},
		{name: "__ after sanitising", workspace: `"a._b": {"command": "x"}`,
			want: nil, errs: []string{`server a._b: the name holds "__"`}, errFile: "ws", errName: "a._b"},
		{name: "__ in the operator's file", op: `"x__y": {"command": "x"}, "z": {"command": "z"}`,
			want: []string{"z@operator"}, errs: []string{`server x__y: the name holds "__"`}, errFile: "op", errName: "x__y"},
		{name: "__ in a host's server", host: []string{"h__i", "j"},
			want: []string{"j@host"}, errs: []string{`server h__i: the name holds "__"`}, errFile: "", errName: "h__i"},
		{name: "a workspace name the operator's begins", workspace: `"a_": {"command": "x"}`, op: `"a": {"command": "y"}`, trustWorkspace: true,
			want: []string{"a@operator"}, errs: []string{"server a_: its tools would be named like those of server a in ", "(mcp__a___… and mcp__a__…)"}, errFile: "ws", errName: "a_"},
		{name: "a workspace name beginning the operator's", workspace: `"a": {"command": "x"}`, op: `"a_": {"command": "y"}`,
			want: []string{"a_@operator"}, errs: []string{"server a: its tools would be named like those of server a_ in "}, errFile: "ws", errName: "a"},
		{name: "within one file the first by name is kept", op: `"a": {"command": "y"}, "a_": {"command": "z"}`,
			want: []string{"a@operator"}, errs: []string{"server a_: its tools would be named like those of server a in "}, errFile: "op", errName: "a_"},
		{name: "the operator's kept over the host's", op: `"a_": {"command": "y"}`, host: []string{"a"},
			want: []string{"a_@operator"}, errs: []string{"server a: its tools would be named like those of server a_ in "}, errFile: "", errName: "a"},
		{name: "long names that shorten alike", op: `"` + strings.Repeat("s", 50) + `1": {"command": "y"}, "` + strings.Repeat("s", 50) + `2": {"command": "z"}`,
			want: []string{strings.Repeat("s", 50) + "1@operator"}, errs: []string{"server " + strings.Repeat("s", 50) + "2: its tools would be named like"}, errFile: "op", errName: strings.Repeat("s", 50) + "2"},
		{name: "the same name is shadowing, not ambiguity", workspace: `"a": {"command": "x"}`, op: `"a": {"command": "y"}`, trustWorkspace: true,
			want: []string{"a@workspace"}},
		{name: "names that merely share a start", workspace: `"ab": {"command": "x"}`, op: `"a": {"command": "y"}, "a-b": {"command": "z"}`,
			want: []string{"a@operator", "a-b@operator", "ab@workspace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
			ws, op := filepath.Join(root, ".mcp.json"), filepath.Join(conf, "mcp.json")
			if tt.workspace != "" {
				writeFile(t, ws, `{"mcpServers": {`+tt.workspace+`}}`)
			}
			if tt.op != "" {
				writeFile(t, op, `{"mcpServers": {`+tt.op+`}}`)
			}
			if tt.trustWorkspace {
				if _, err := mcphost.NewTrustStore(conf).Trust(context.Background(), ws); err != nil {
					t.Fatal(err)
				}
			}
			var host []mcpbind.ServerConfig
			for _, h := range tt.host {
				host = append(host, mcpbind.ServerConfig{Name: h, Command: "h"})
			}
			cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf), Host: host})
			var got []string
			for _, s := range cfg.Servers {
				got = append(got, s.Name+"@"+string(s.Origin))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if len(tt.errs) == 0 {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			var ce *configfile.Error
			if !errors.Is(err, mcpbind.ErrInvalidValue) || !errors.As(err, &ce) {
				t.Fatalf("error %v, want a ConfigError wrapping ErrInvalidValue", err)
			}
			file := map[string]string{"ws": ws, "op": op, "": ""}[tt.errFile]
			if ce.File != file || ce.Subject != "server "+tt.errName {
				t.Errorf("the error names file %q and %q, want %q and server %q: %v", ce.File, ce.Subject, file, tt.errName, err)
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}
