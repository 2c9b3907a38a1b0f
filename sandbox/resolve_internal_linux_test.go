package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// evalSymlinks answers as filepath.EvalSymlinks does, for paths with no
// link, with one at any place, missing, relative or not clean.
func TestEvalSymlinksIsFilepaths(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir) // the temporary directory may lie behind a link
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(real, "a/b"))
	if err := os.WriteFile(filepath.Join(real, "a/b/f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(real, "a"), filepath.Join(real, "toa"))
	mustSymlink(t, "b", filepath.Join(real, "a/tob"))
	mustSymlink(t, filepath.Join(real, "nowhere"), filepath.Join(real, "dangling"))
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(real, "a/b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		real,
		filepath.Join(real, "a/b"),
		filepath.Join(real, "a/b/f"),
		filepath.Join(real, "toa/b"),
		filepath.Join(real, "a/tob/f"),
		filepath.Join(real, "toa"),
		filepath.Join(real, "dangling"),
		filepath.Join(real, "missing/x"),
		real + "/a/../a/b",
		real + "//a/b/",
		rel,
		"/",
		"",
	} {
		want, wantErr := filepath.EvalSymlinks(p)
		got, err := evalSymlinks(p)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("evalSymlinks(%q) = %q, %v; filepath.EvalSymlinks: %q, %v", p, got, err, want, wantErr)
		}
	}
}
