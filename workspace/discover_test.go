//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// fakeFiles plays owners and filesystems: paths under a foreign prefix
// belong to uid 4242, and paths under a mount prefix are on device 2.
type fakeFiles struct {
	foreign, mount string
}

func (fakeFiles) uid() int { return 1000 }

func (f fakeFiles) owner(path string) (int, bool) {
	if f.foreign != "" && within(path, f.foreign) {
		return 4242, true
	}
	return 1000, true
}

func (f fakeFiles) device(path string) (uint64, bool) {
	if f.mount != "" && within(path, f.mount) {
		return 2, true
	}
	return 1, true
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func TestFindRoot(t *testing.T) {
	// Each case lays out directories under a fresh temp dir T and starts
	// in one of them; want is the root found, relative to T.
	for _, tc := range []struct {
		name    string
		dirs    []string // directories to create
		plain   []string // files to create
		start   string
		home    string // relative to T; "" leaves HOME outside T
		files   fakeFiles
		safe    string // BASIS_SAFE_DIRECTORIES, with T/ prepended to relative entries
		want    string
		foreign string // the root of a *ForeignWorkspaceError expected instead
	}{
		{name: "in the root", dirs: []string{"ws/.basis"}, start: "ws", want: "ws"},
		{name: "from a subdirectory", dirs: []string{"ws/.basis", "ws/cmp/cmpopts"}, start: "ws/cmp/cmpopts", want: "ws"},
		{name: "nearest wins", dirs: []string{"ws/.basis", "ws/inner/.basis", "ws/inner/deep"}, start: "ws/inner/deep", want: "ws/inner"},
		{name: "none found: the current directory", dirs: []string{"ws/sub"}, start: "ws/sub", want: "ws/sub"},
		{name: "a .basis file is not a workspace", dirs: []string{".basis", "ws/sub"}, plain: []string{"ws/.basis"}, start: "ws/sub", want: "."},
		{name: "stops at a repository's root", dirs: []string{"ws/.basis", "ws/repo/.git", "ws/repo/sub"}, start: "ws/repo/sub", want: "ws/repo/sub"},
		{name: "a repository's root is checked", dirs: []string{"ws/repo/.git", "ws/repo/.basis", "ws/repo/sub"}, start: "ws/repo/sub", want: "ws/repo"},
		{name: "stops at HOME", dirs: []string{"ws/.basis", "ws/home/project"}, start: "ws/home/project", home: "ws/home", want: "ws/home/project"},
		{name: "HOME itself is checked", dirs: []string{"ws/home/.basis", "ws/home/project"}, start: "ws/home/project", home: "ws/home", want: "ws/home"},
		{name: "does not cross a filesystem", dirs: []string{"ws/.basis", "ws/mnt/sub"}, start: "ws/mnt/sub", files: fakeFiles{mount: "ws/mnt"}, want: "ws/mnt/sub"},
		{name: "another user's .basis is refused", dirs: []string{"ws/.basis", "ws/sub"}, start: "ws/sub", files: fakeFiles{foreign: "ws/.basis"}, foreign: "ws"},
		{name: "even where the walk starts", dirs: []string{"ws/.basis"}, start: "ws", files: fakeFiles{foreign: "ws/.basis"}, foreign: "ws"},
		{name: "trusted by name", dirs: []string{"ws/.basis", "ws/sub"}, start: "ws/sub", files: fakeFiles{foreign: "ws/.basis"}, safe: "/elsewhere:ws", want: "ws"},
		{name: "trusted by *", dirs: []string{"ws/.basis", "ws/sub"}, start: "ws/sub", files: fakeFiles{foreign: "ws/.basis"}, safe: "*", want: "ws"},
		{name: "another directory's trust does not count", dirs: []string{"ws/.basis", "ws/sub"}, start: "ws/sub", files: fakeFiles{foreign: "ws/.basis"}, safe: "ws/sub", foreign: "ws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.plain {
				write(t, filepath.Join(base, f), "not a directory")
			}
			abs := func(rel string) string {
				if rel == "" {
					return ""
				}
				return filepath.Join(base, rel)
			}
			home := abs(tc.home)
			if home == "" {
				home = "/nonexistent-home"
			}
			environ := []string{"HOME=" + home}
			if tc.safe != "" {
				var entries []string
				for _, s := range strings.Split(tc.safe, ":") {
					if s != "*" && !filepath.IsAbs(s) {
						s = abs(s)
					}
					entries = append(entries, s)
				}
				environ = append(environ, SafeDirectoriesEnv+"="+strings.Join(entries, ":"))
			}
			files := fakeFiles{foreign: abs(tc.files.foreign), mount: abs(tc.files.mount)}
			got, err := findRoot(abs(tc.start), func(name string) string { v, _ := subprocess.LookupEnv(environ, name); return v }, files)
			if tc.foreign != "" {
				var fe *ForeignWorkspaceError
				if !errors.As(err, &fe) {
					t.Fatalf("findRoot = %q, %v; want a *ForeignWorkspaceError", got, err)
				}
				if diff := cmp.Diff(ForeignWorkspaceError{Root: abs(tc.foreign), Owner: 4242}, *fe); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				for _, how := range []string{"-C " + abs(tc.foreign), SafeDirectoriesEnv} {
					if !strings.Contains(err.Error(), how) {
						t.Errorf("the error does not say how to trust the directory (%q): %v", how, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(abs(tc.want), got); diff != "" {
				t.Errorf("root (-want +got):\n%s", diff)
			}
		})
	}
}
