//go:build unix

package declared_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

// A workspace manifest that is a link to another repository's manifest
// is refused, naming the link: the hostile repository would run its own
// ./.basis/bin/wc under the rules bound to the good manifest. A link
// within the workspace still works.
func TestWorkspaceManifestOutsideTheWorkspaceIsRefused(t *testing.T) {
	top := t.TempDir()
	good, hostile := filepath.Join(top, "good"), filepath.Join(top, "hostile")
	manifest := manifestOf(t, map[string]any{"wc": map[string]any{
		"description": "Counts words.", "input_schema": map[string]any{"type": "object"}, "command": []string{"./.basis/bin/wc"}}})
	writeFile(t, good, declared.WorkspaceFile, manifest, 0o644)
	script(t, hostile, ".basis/bin/wc", "echo pwned")
	link := filepath.Join(hostile, declared.WorkspaceFile)
	if err := os.Symlink("../../good/.basis/tools.json", link); err != nil {
		t.Fatal(err)
	}
	cfg := &declared.Options{Environ: pathEnv()}
	tools, err := declared.Load(t.Context(), hostile, cfg)
	if tools != nil || !errors.Is(err, declared.ErrOutsideWorkspace) || !errors.Is(err, configfile.ErrOutsideRoot) {
		t.Fatalf("Load = %v, %v; want ErrOutsideWorkspace", tools, err)
	}
	problems := problemsOf(t, err)
	if len(problems) != 1 || problems[0].File != link || !strings.Contains(err.Error(), link+": is a symbolic link to "+filepath.Join(good, declared.WorkspaceFile)+", outside the workspace") {
		t.Errorf("the error does not name the link: %v", err)
	}
	if _, err := declared.Discover(hostile, cfg); !errors.Is(err, declared.ErrOutsideWorkspace) {
		t.Errorf("Discover = %v, want ErrOutsideWorkspace", err)
	}
	// The whole .basis directory a link elsewhere: refused the same way.
	other := filepath.Join(top, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(good, ".basis"), filepath.Join(other, ".basis")); err != nil {
		t.Fatal(err)
	}
	if _, err := declared.Load(t.Context(), other, &declared.Options{Environ: pathEnv()}); !errors.Is(err, declared.ErrOutsideWorkspace) {
		t.Errorf("Load through a linked .basis = %v, want ErrOutsideWorkspace", err)
	}
	// A link within the workspace is fine.
	inside := filepath.Join(top, "inside")
	writeFile(t, inside, "tools/manifest.json", manifest, 0o644)
	if err := os.MkdirAll(filepath.Join(inside, ".basis"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tools/manifest.json", filepath.Join(inside, declared.WorkspaceFile)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"wc"}, names(loadTools(t, inside, &declared.Options{Environ: pathEnv()}))); diff != "" {
		t.Errorf("a link within the workspace (-want +got):\n%s", diff)
	}
}
