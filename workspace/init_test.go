//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// Init writes a workspace whose example tool loads and runs, and then
// overwrites nothing, not even a file planted where one of its two would go.
func TestInit(t *testing.T) {
	root := t.TempDir()
	if err := Init(root); err != nil {
		t.Fatal(err)
	}
	w := openIn(t, root, t.TempDir())
	rt, err := w.Runtime(t.Context(), &RuntimeOptions{Approver: approver.AllowAll()})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "words.txt"), "one two\n")
	if out := rt.Call(t.Context(), "word_count", contract.Call{ID: "1", Input: []byte(`{"path": "words.txt"}`)}); out.Status != runtime.StatusOK || out.Text != "words.txt: 1 lines, 2 words, 8 bytes" {
		t.Errorf("word_count: %v %q", out.Status, out.Text)
	}

	for _, planted := range []string{".basis/tools.json", ".basis/bin/word_count"} {
		t.Run(planted, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, planted), "mine")
			err := Init(root)
			var pe *fs.PathError
			if !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) || pe.Path != filepath.Join(root, planted) {
				t.Fatalf("Init = %v; want fs.ErrExist naming %s", err, planted)
			}
			if data, _ := os.ReadFile(filepath.Join(root, planted)); string(data) != "mine" {
				t.Errorf("%s was overwritten: %q", planted, data)
			}
			for _, other := range []string{".basis/tools.json", ".basis/bin/word_count"} {
				if _, err := os.Stat(filepath.Join(root, other)); other != planted && err == nil {
					t.Errorf("%s was written although %s was there", other, planted)
				}
			}
		})
	}
}
