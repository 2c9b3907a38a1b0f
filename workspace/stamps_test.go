//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// An edit, a new file and a removed one are each a change; a file stamped
// again untouched is none.
func TestStampsChanged(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	manifest := filepath.Join(ws, ".basis", "tools.json")
	rules := filepath.Join(ws, ".basis", "rules.json")
	extra := filepath.Join(ws, ".mcp.json")
	write(t, manifest, `{"schema": 1, "tools": {}}`)
	write(t, extra, `{}`)
	w := openIn(t, ws, home)
	before := w.Stamp(extra)
	if got := before.Changed(w.Stamp(extra)); len(got) != 0 {
		t.Fatalf("nothing changed, yet %q did", got)
	}
	write(t, manifest, `{"schema": 1, "tools": {} }`)
	// The same size and time would not count: make the time differ for sure.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(manifest, later, later); err != nil {
		t.Fatal(err)
	}
	write(t, rules, `{"schema": 2, "rules": []}`)
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{rules, manifest, extra}, before.Changed(w.Stamp(extra))); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{extra}, w.Stamp().Changed(w.Stamp(extra))); diff != "" {
		t.Errorf("a file stamped in one only (-want +got):\n%s", diff)
	}
}
