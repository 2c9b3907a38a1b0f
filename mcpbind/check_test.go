//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/google/go-cmp/cmp"
)

// Check lists the files' problems and every server's unset variable
// without starting anything; with start, it starts the trusted servers
// and names their tools.
func TestManagerCheck(t *testing.T) {
	conf := t.TempDir()
	data := `{"mcpServers": {
  "good": {"command": ` + strconv.Quote(serverBin) + `},
  "unset": {"command": ` + strconv.Quote(serverBin) + `, "env": {"TOKEN": "${CHECK_TEST_UNSET}"}},
  "bad": {"type": "websocket", "url": "ws://x"}
}}`
	if err := os.WriteFile(filepath.Join(conf, mcpbind.OperatorFileName), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) (string, bool) { return "", false }
	for _, start := range []bool{false, true} {
		t.Run("start="+strconv.FormatBool(start), func(t *testing.T) {
			m := mcpbind.Open(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf}, &mcpbind.ManagerOptions{Lookup: none})
			t.Cleanup(func() { m.Close() })
			problems, tools := m.Check(context.Background(), start)
			var subjects []string
			for _, err := range problems {
				var ce *configfile.Error
				if !errors.As(err, &ce) {
					t.Fatalf("problem %v is no *configfile.Error", err)
				}
				subjects = append(subjects, ce.Subject)
			}
			if diff := cmp.Diff([]string{"server bad", "server unset"}, subjects); diff != "" {
				t.Errorf("problems' subjects (-want +got):\n%s", diff)
			}
			if !start {
				if tools != nil {
					t.Errorf("tools without start = %v, want none", tools)
				}
				for _, s := range m.Status() {
					if s.State == mcpbind.StateConnected {
						t.Errorf("server %s started without start", s.Server)
					}
				}
				return
			}
			if len(tools) != 1 || len(tools["good"]) == 0 || !slices.IsSorted(tools["good"]) {
				t.Errorf("tools = %v, want the good server's, sorted", tools)
			}
		})
	}
}
