package trampoline

import (
	"path/filepath"
	"testing"
)

// The path helpers that stand in for path/filepath (whose initialisation
// would delay the dispatch) agree with it on what the trampoline gets:
// absolute paths, clean or not, and the kernel's mount points.
func TestPathHelpersAgreeWithFilepath(t *testing.T) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/../a", "/a/b/..", "/a/b/../..", "/a/.git/", "/.", "/a/..b/c", "/a b/c"} {
		if got, want := cleanAbs(p), filepath.Clean(p); got != want {
			t.Errorf("cleanAbs(%q) = %q, filepath.Clean says %q", p, got, want)
		}
	}
	for _, tc := range []struct{ path, root string }{
		{"/", "/"}, {"/a", "/"}, {"/a/b", "/a"}, {"/a", "/a"}, {"/ab", "/a"}, {"/a/b/c", "/a/b"}, {"/b", "/a"}, {"/a", "/a/b"},
	} {
		rel, ok := beneath(tc.path, tc.root)
		wantRel, err := filepath.Rel(tc.root, tc.path)
		wantOK := err == nil && (tc.path == tc.root || tc.root == "/" || len(tc.path) > len(tc.root) && tc.path[:len(tc.root)+1] == tc.root+"/")
		if ok != wantOK || ok && rel != wantRel {
			t.Errorf("beneath(%q, %q) = %q, %v; want %q, %v", tc.path, tc.root, rel, ok, wantRel, wantOK)
		}
		if ok {
			for _, dir := range []string{"/", "/m", "/m/n"} {
				if got, want := joinRel(dir, rel), filepath.Join(dir, rel); got != want {
					t.Errorf("joinRel(%q, %q) = %q, filepath.Join says %q", dir, rel, got, want)
				}
			}
		}
	}
	for _, tc := range []struct{ dir, name string }{{"/", "etc"}, {"/etc", "shadow"}, {"/dev/shm", "basis-call-1"}} {
		p := join(tc.dir, tc.name)
		if want := filepath.Join(tc.dir, tc.name); p != want {
			t.Errorf("join(%q, %q) = %q, filepath.Join says %q", tc.dir, tc.name, p, want)
		}
		if got := base(p); got != filepath.Base(p) {
			t.Errorf("base(%q) = %q, filepath.Base says %q", p, got, filepath.Base(p))
		}
	}
}
