package configfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestWithinRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root + "/a/b", outside + "/x"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"out":      outside,          // a link inside pointing out
		"rel-out":  "../outside",     // the same, relative
		"in":       "a/b",            // a link that stays inside
		"a/up":     "..",             // a link to the root itself
		"loop":     "loop",           // a link to itself
		"dangling": "does-not-exist", // inside, to nothing
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The root reached through a link of its own is the same root.
	rootLink := filepath.Join(base, "ws-link")
	if err := os.Symlink(root, rootLink); err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		root, dir string
		want      string // the real path; "" for an error
		outside   bool   // the error wraps ErrOutsideRoot
		notExist  bool   // the error wraps fs.ErrNotExist
	}{
		{root: root, dir: "", want: realRoot},
		{root: root, dir: ".", want: realRoot},
		{root: root, dir: "a/b", want: realRoot + "/a/b"},
		{root: root, dir: root + "/a", want: realRoot + "/a"},
		{root: root, dir: "in", want: realRoot + "/a/b"},
		{root: root, dir: "a/up", want: realRoot},
		{root: root, dir: "a/b/../..", want: realRoot},
		{root: rootLink, dir: "a", want: realRoot + "/a"},
		{root: rootLink, dir: root + "/a", want: realRoot + "/a"},
		// Out, every way.
		{root: root, dir: "..", outside: true},
		{root: root, dir: "../../etc", outside: true},
		{root: root, dir: "../../../../../../../../root", outside: true},
		{root: root, dir: "/etc", outside: true},
		{root: root, dir: outside, outside: true},
		{root: root, dir: "out", outside: true},
		{root: root, dir: "out/x", outside: true},
		{root: root, dir: "rel-out", outside: true},
		// ".." after a link is taken from where the link leads, not
		// lexically: in/.. is a, so in/../.. is the root and
		// in/../../.. is outside.
		{root: root, dir: "in/../..", want: realRoot},
		{root: root, dir: "in/../../..", outside: true},
		{root: root, dir: "a/up/..", outside: true},
		// Missing: judged by what exists.
		{root: root, dir: "missing", notExist: true},
		{root: root, dir: "a/missing/deeper", notExist: true},
		{root: root, dir: "dangling", notExist: true},
		{root: root, dir: "out/missing", outside: true},
		{root: root, dir: "missing/../../etc", outside: true},
		{root: root, dir: "../missing", outside: true},
		// Neither: the operating system's error.
		{root: root, dir: "loop"},
		{root: root, dir: "file/sub"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			got, err := configfile.WithinRoot(tt.root, tt.dir)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("WithinRoot(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("WithinRoot(%q) = %q, want an error", tt.dir, got)
			}
			if got != "" {
				t.Errorf("WithinRoot(%q) returned the path %q with its error", tt.dir, got)
			}
			if o := errors.Is(err, configfile.ErrOutsideRoot); o != tt.outside {
				t.Errorf("WithinRoot(%q) = %v: outside %t, want %t", tt.dir, err, o, tt.outside)
			}
			if n := errors.Is(err, fs.ErrNotExist); n != tt.notExist {
				t.Errorf("WithinRoot(%q) = %v: not-exist %t, want %t", tt.dir, err, n, tt.notExist)
			}
		})
	}
}

func TestWithinRootMissingRoot(t *testing.T) {
	_, err := configfile.WithinRoot(filepath.Join(t.TempDir(), "gone"), ".")
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, configfile.ErrOutsideRoot) {
		t.Fatalf("a root that does not exist: %v", err)
	}
}
