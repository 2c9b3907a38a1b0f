//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/google/go-cmp/cmp"
)

// Open keeps the servers it can use, lists one problem per server it left
// out, and StartFor starts only the server of the tool named.
func TestOpenKeepsGoodServersAndListsProblems(t *testing.T) {
	conf := t.TempDir()
	data := `{"mcpServers": {
  "good": {"command": ` + strconv.Quote(serverBin) + `},
  "idle": {"command": ` + strconv.Quote(serverBin) + `},
  "bad": {"type": "websocket", "url": "ws://x"},
  "worse": {"command": ""}
}}`
	if err := os.WriteFile(filepath.Join(conf, mcpbind.OperatorFileName), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	m := mcpbind.Open(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf}, nil)
	t.Cleanup(func() { m.Close() })
	var subjects []string
	for _, err := range m.Problems() {
		var ce *configfile.Error
		if !errors.As(err, &ce) {
			t.Fatalf("problem %v is no *configfile.Error", err)
		}
		subjects = append(subjects, ce.Subject)
	}
	if diff := cmp.Diff([]string{"server bad", "server worse"}, subjects); diff != "" {
		t.Errorf("problems' subjects (-want +got):\n%s", diff)
	}
	var names []string
	for _, s := range m.Config().Servers {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"good", "idle"}, names); diff != "" {
		t.Errorf("servers kept (-want +got):\n%s", diff)
	}
	if err := m.StartFor(context.Background(), "read_file"); err != nil {
		t.Errorf("StartFor a tool no server has: %v", err)
	}
	if err := m.StartFor(context.Background(), "mcp__good__echo"); err != nil {
		t.Fatalf("StartFor mcp__good__echo: %v", err)
	}
	got := map[string]string{}
	for _, st := range m.Status() {
		got[st.Server] = string(st.State)
	}
	if diff := cmp.Diff(map[string]string{"good": "connected", "idle": "not started"}, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	for _, tl := range m.Tools() {
		if d := tl.Descriptor(); !strings.HasPrefix(d.Name, "mcp__good__") {
			t.Errorf("tool %s of a server not started", d.Name)
		}
	}
}

// A server whose Origin was never set is the workspace's, the least
// trusted: with no trusted file it is never started, whatever a host
// wrote in code.
func TestZeroOriginIsUntrusted(t *testing.T) {
	cfg := &mcpbind.Config{Servers: []mcpbind.ServerConfig{{Name: "x", Type: mcpbind.TypeStdio, Command: serverBin}}}
	if got := cfg.Trust("x"); got != mcpbind.Untrusted {
		t.Errorf("Trust of a server with no Origin = %q, want untrusted", got)
	}
	m := mcpbind.NewManager(cfg, nil)
	t.Cleanup(func() { m.Close() })
	_ = m.StartAll(context.Background())
	if st := m.Status(); len(st) != 1 || st[0].State != mcpbind.StateUntrusted {
		t.Errorf("status %v, want untrusted", st)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("an untrusted server has tools")
	}
}
