//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitConfig(t *testing.T) {
	data := `# a comment
[core]
	hooksPath = .husky/_ ; why
	fsmonitor = "touch \"x\""
[include]
	path = ../shared.gitconfig
[includeIf "gitdir:~/work/"]
	path = "~/work.gitconfig"
[submodule "lib"]
	path = third_party/lib
	url = https://example.com/lib
[Core.Sub] hooksPath=/abs
broken line
[unterminated
	path = ignored
`
	want := []gitEntry{
		{"core", "hookspath", ".husky/_"},
		{"core", "fsmonitor", `touch "x"`},
		{"include", "path", "../shared.gitconfig"},
		{"includeif", "path", "~/work.gitconfig"},
		{"submodule", "path", "third_party/lib"},
		{"submodule", "url", "https://example.com/lib"},
		{"core", "hookspath", "/abs"},
	}
	if diff := cmp.Diff(want, gitConfig([]byte(data)), cmp.AllowUnexported(gitEntry{})); diff != "" {
		t.Errorf("gitConfig (-want +got):\n%s", diff)
	}
}

// What the search for protected paths finds, and the bounds it keeps.
func TestProtectedPathsFound(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		".git/config":                  "[include]\n\tpath = ../shared.gitconfig\n[core]\n\thooksPath = " + outside + "/hooks\n",
		"shared.gitconfig":             "",
		".gitmodules":                  "[submodule \"deep\"]\n\tpath = v/w/x/y/z/deep\n[submodule \"gone\"]\n\tpath = not/checked/out\n[submodule \"escape\"]\n\tpath = ../../etc\n",
		"v/w/x/y/z/deep/.git":          "gitdir: ../../../../../../.git/modules/deep\n",
		"wt/.git":                      "gitdir: " + ws + "/store/wt.git\n",
		"store/wt.git/config":          "",
		"p/q/r/.git/config":            "",
		"p/q/r/s/.git/config":          "",
		"node_modules/pkg/.git/config": "",
		"docs/readme.md":               "",
		".vscode/tasks.json":           "",
		".git/modules/deep/config":     "",
		".basis/tools.json":            "",
		"a/.basis/tools.json":          "",
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(outside, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := New(Policy{Protect: []string{".vscode/tasks.json", filepath.Join(ws, "docs")}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sb.protectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".basis", ".git", ".vscode/tasks.json", "docs",
		"p/q/r/.git",          // three levels down: found
		"shared.gitconfig",    // included by .git/config
		"store/wt.git",        // where wt/.git points
		"v/w/x/y/z/deep/.git", // a submodule, at any depth
		"wt/.git",
	}
	for i := range want {
		want[i] = filepath.Join(ws, want[i])
	}
	// Not found: p/q/r/s/.git (four levels down), node_modules, a/.basis
	// (.basis is looked for in the writable directories themselves), the
	// hook directory outside the workspace (read-only already).
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("protectedPaths (-want +got):\n%s", diff)
	}
}

func TestProtectedPathsRefuseLinks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, ws, outside string)
		link  string
	}{
		{".git a link", func(t *testing.T, ws, outside string) {
			mustSymlink(t, outside, filepath.Join(ws, ".git"))
		}, ".git"},
		{"a nested .git a link", func(t *testing.T, ws, outside string) {
			mustMkdir(t, filepath.Join(ws, "sub"))
			mustSymlink(t, outside, filepath.Join(ws, "sub", ".git"))
		}, "sub/.git"},
		{"a submodule reached through a link", func(t *testing.T, ws, outside string) {
			mustMkdir(t, filepath.Join(ws, ".git"))
			mustMkdir(t, filepath.Join(outside, "sub", ".git"))
			mustSymlink(t, outside, filepath.Join(ws, "link"))
			if err := os.WriteFile(filepath.Join(ws, ".gitmodules"), []byte("[submodule \"s\"]\n\tpath = link/sub\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "link"},
		{"a protected path reached through a link", func(t *testing.T, ws, outside string) {
			mustMkdir(t, filepath.Join(outside, ".vscode"))
			mustSymlink(t, filepath.Join(outside, ".vscode"), filepath.Join(ws, ".vscode"))
			if err := os.WriteFile(filepath.Join(outside, ".vscode", "tasks.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".vscode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			tt.setup(t, ws, outside)
			sb, err := New(Policy{Protect: []string{".vscode/tasks.json"}}, ws)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sb.protectedPaths(ws)
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), filepath.Join(ws, tt.link)+" is a symbolic link") {
				t.Fatalf("error = %v, want one naming %s", err, tt.link)
			}
		})
	}
}

// The search reads a bounded number of directories, however large the
// tree.
func TestProtectedPathsBudget(t *testing.T) {
	ws := t.TempDir()
	for i := range walkBudget + 10 {
		mustMkdir(t, filepath.Join(ws, "d", "dir"+strconv.Itoa(i)))
	}
	late := filepath.Join(ws, "zz", "repo")
	mustMkdir(t, filepath.Join(late, ".git"))
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := sb.protectedPaths(ws)
	if len(got) != 0 {
		t.Fatalf("found %q past the budget of %d directories", got, walkBudget)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// The search remembers directories it read and reads again those whose
// change time moved: a repository added since is found, even when the
// program that added it set the directory's modification time back.
func TestProtectedPathsRemembered(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("directories are remembered on Linux only")
	}
	ws := t.TempDir()
	for _, d := range []string{"a/b", "c", ".git"} {
		mustMkdir(t, filepath.Join(ws, d))
	}
	search := searching(t, ws, func(ls *listings) int { return ls.reads })
	// Directories changed within the last two seconds are read every time.
	if _, reads := search(); reads != 4 {
		t.Fatalf("first search read %d directories, want 4", reads)
	}
	if _, reads := search(); reads != 4 {
		t.Fatalf("a search right after read %d directories, want all 4 again (too fresh to remember)", reads)
	}
	settleEverything(t)
	search()
	if got, reads := search(); reads != 0 || len(got) != 1 {
		t.Fatalf("an unchanged tree: read %d directories, found %q; want 0 and the .git", reads, got)
	}
	old, err := os.Stat(filepath.Join(ws, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(ws, "a", "b", ".git"))
	if err := os.Chtimes(filepath.Join(ws, "a", "b"), old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, reads := search()
	if diff := cmp.Diff([]string{filepath.Join(ws, ".git"), filepath.Join(ws, "a", "b", ".git")}, got); diff != "" || reads != 1 {
		t.Fatalf("after a/b/.git was made (%d directories read) (-want +got):\n%s", reads, diff)
	}
}

// A git config is read again only when it changed: the search remembers
// its entries while the file's change time is settled and unchanged, and a
// program that rewrites it and sets its modification time back still
// moves the change time, so the hook directory it names is protected at
// the next call.
func TestGitConfigRemembered(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("config files are remembered on Linux only")
	}
	ws := t.TempDir()
	mustMkdir(t, filepath.Join(ws, ".git"))
	mustMkdir(t, filepath.Join(ws, "hooks"))
	cfg := filepath.Join(ws, ".git", "config")
	if err := os.WriteFile(cfg, []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	search := searching(t, ws, func(ls *listings) int { return ls.configReads })
	if _, reads := search(); reads != 1 {
		t.Fatalf("first search read %d config files, want 1", reads)
	}
	if _, reads := search(); reads != 1 {
		t.Fatalf("a search right after read %d config files, want it again (too fresh to remember)", reads)
	}
	settleEverything(t)
	search()
	if got, reads := search(); reads != 0 || len(got) != 1 {
		t.Fatalf("an unchanged config: read %d times, found %q; want 0 and the .git", reads, got)
	}
	old, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[core]\n\tbare = false\n\thooksPath = hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(cfg, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, reads := search()
	if diff := cmp.Diff([]string{filepath.Join(ws, ".git"), filepath.Join(ws, "hooks")}, got); diff != "" || reads != 1 {
		t.Fatalf("after hooksPath was added (%d config reads) (-want +got):\n%s", reads, diff)
	}
}

// searching returns a search for what to protect in ws, by a Sandbox of
// its own with listings of its own that go by their stamps alone (no
// watch), that fails the test on an error and says what it found and how
// much count (of the Sandbox's listings) grew.
func searching(t *testing.T, ws string, count func(*listings) int) func() ([]string, int) {
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ownListings(t, sb, false)
	return func() ([]string, int) {
		t.Helper()
		before := count(sb.listings)
		got, err := sb.protectedPaths(ws)
		if err != nil {
			t.Fatal(err)
		}
		return got, count(sb.listings) - before
	}
}

// settleEverything moves the clock a minute on, until the test ends: every
// change time is then settled, and what is read is remembered.
func settleEverything(t *testing.T) {
	t.Cleanup(SettleEveryChangeTime())
}

// A writable directory's .git, .basis and .mcp.json are found from its
// listing, remembered or read again: one made, removed or replaced by a
// link since — even by a program that then set the directory's
// modification time back — is found, dropped or refused at the next
// search, as a lookup of each would.
func TestAlwaysProtectedFollowTheRootsListing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("directories are remembered on Linux only")
	}
	settleEverything(t)
	ws, outside := t.TempDir(), t.TempDir()
	mustMkdir(t, filepath.Join(ws, ".git"))
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ownListings(t, sb, true)
	// change runs fn in ws and sets ws's modification time back.
	change := func(fn func()) {
		t.Helper()
		old, err := os.Stat(ws)
		if err != nil {
			t.Fatal(err)
		}
		fn()
		if err := os.Chtimes(ws, old.ModTime(), old.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	search := func(step string, want []string, reads int) {
		t.Helper()
		before := sb.listings.reads
		got, err := sb.protectedPaths(ws)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for i, w := range want {
			want[i] = filepath.Join(ws, w)
		}
		if diff := cmp.Diff(want, got); diff != "" || sb.listings.reads-before != reads {
			t.Errorf("%s: read %d directories, want %d; found (-want +got):\n%s", step, sb.listings.reads-before, reads, diff)
		}
	}
	search("first", []string{".git"}, 1)
	search("remembered", []string{".git"}, 0)
	change(func() {
		if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mustMkdir(t, filepath.Join(ws, ".basis"))
	})
	search(".mcp.json and .basis made", []string{".basis", ".git", ".mcp.json"}, 2) // ws, and .basis, walked
	search(".mcp.json and .basis remembered", []string{".basis", ".git", ".mcp.json"}, 0)
	change(func() {
		if err := os.Remove(filepath.Join(ws, ".mcp.json")); err != nil {
			t.Fatal(err)
		}
	})
	search(".mcp.json removed", []string{".basis", ".git"}, 1)
	change(func() {
		if err := os.Remove(filepath.Join(ws, ".basis")); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, outside, filepath.Join(ws, ".basis"))
	})
	for _, step := range []string{".basis replaced by a link", ".basis a link, remembered"} {
		if _, err := sb.protectedPaths(ws); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), filepath.Join(ws, ".basis")+" is a symbolic link") {
			t.Errorf("%s: error = %v, want one naming .basis", step, err)
		}
	}
}

// ownListings gives sb listings of its own, so that what the test counts
// is its own: watched as the process's are where the kernel allows, or
// going by the listings' stamps alone.
func ownListings(t *testing.T, sb *Sandbox, watched bool) *listings {
	t.Helper()
	ls := &listings{searches: searchesBeforeWatch}
	if !watched {
		ls.watchTried = true
	}
	t.Cleanup(func() { ls.watch.close() })
	sb.listings = ls
	return ls
}
