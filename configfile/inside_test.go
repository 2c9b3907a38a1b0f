//go:build unix

package configfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestInside(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, hostile := filepath.Join(top, "good"), filepath.Join(top, "hostile")
	for _, d := range []string{good + "/.basis", hostile + "/.basis", hostile + "/real", top + "/other"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite := func(p string) {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(good + "/.basis/tools.json")
	mustWrite(hostile + "/real/tools.json")
	mustWrite(hostile + "/.mcp.json")
	link("../../good/.basis/tools.json", hostile+"/.basis/tools.json") // the relative link
	link(good+"/.basis", hostile+"/linked-basis")                      // a directory on the way
	link("real/tools.json", hostile+"/inside.json")                    // a link within: fine
	link("/no/such/file", hostile+"/dangling.json")
	link(hostile, top+"/other/ws") // the workspace reached through a link

	tests := []struct {
		root, path string
		want       string // the real path; "" for an error
		outside    bool
	}{
		{hostile, hostile + "/.mcp.json", hostile + "/.mcp.json", false},
		{hostile, hostile + "/inside.json", hostile + "/real/tools.json", false},
		{top + "/other/ws", top + "/other/ws/inside.json", hostile + "/real/tools.json", false},
		{hostile, hostile + "/.basis/tools.json", "", true},
		{hostile, hostile + "/linked-basis/tools.json", "", true},
		{hostile, hostile + "/../good/.basis/tools.json", "", true},
		{hostile + "/real", hostile + "/real/../.mcp.json", "", true},
	}
	for _, tt := range tests {
		got, err := configfile.Inside(tt.root, tt.path)
		var oe *configfile.OutsideError
		switch {
		case tt.outside && (!errors.As(err, &oe) || !errors.Is(err, configfile.ErrOutsideRoot) || oe.Path != tt.path):
			t.Errorf("Inside(%s, %s) = %q, %v; want an OutsideError naming the link", tt.root, tt.path, got, err)
		case !tt.outside && (err != nil || got != tt.want):
			t.Errorf("Inside(%s, %s) = %q, %v; want %s", tt.root, tt.path, got, err, tt.want)
		}
	}
	if _, err := configfile.Inside(hostile, hostile+"/dangling.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling link: %v", err)
	}
	if _, err := configfile.Inside(hostile, hostile+"/missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	_, err = configfile.Inside(hostile, hostile+"/.basis/tools.json")
	want := hostile + "/.basis/tools.json: is a symbolic link to " + good + "/.basis/tools.json, outside the workspace " + hostile +
		"; a workspace's configuration must lie inside it (a link within the workspace is fine): replace the link with a copy of the file"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n%v\nwant\n%s", err, want)
	}
}
