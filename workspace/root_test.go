//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// An Options.Root that is no directory is a *RootError naming the root as
// given, so that a host can word it after its own flag.
func TestOpenRefusesARootThatIsNoDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"no/such/dir", "file", filepath.Join(dir, "missing")} {
		w, err := Open(t.Context(), &Options{Root: root, Dir: dir, Environ: []string{"HOME=" + dir}})
		var re *RootError
		if w != nil || !errors.As(err, &re) || re.Root != root {
			t.Errorf("Root %q: Open = %v, %v; want a *RootError for %q", root, w, err, root)
		}
	}
}
