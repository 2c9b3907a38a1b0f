//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// callDirs lists the entries of dir named as per-call directories.
func callDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "basis-call-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// A host killed mid-call (SIGKILL: nothing of it runs) leaves its call's
// temporary directory, and what the program wrote there, behind. The next
// process that starts a sandboxed program removes it, and nothing else:
// not a live call's directory, nor another user's, nor a file or a
// symbolic link that only looks like one, nor what such a link points to.
func TestLeftCallDirectoriesAreRemovedByTheNextProcess(t *testing.T) {
	requireSandbox(t)
	tmp, outside := t.TempDir(), t.TempDir()
	marker := newMarker(t)

	killed := startHost(t, marker, viaPrepare, tmp)
	left := callDirs(t, tmp)
	if len(left) != 1 {
		t.Fatalf("call directories while the host runs: %q, want one", left)
	}
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	stale := filepath.Join(tmp, left[0])
	writeFiles(t, stale, map[string]string{"build/object.o": "what the program wrote"})
	if got := callDirs(t, tmp); !slices.Equal(got, left) {
		t.Fatalf("after the kill: %q, want the killed call's %q left", got, left)
	}

	live := startHost(t, marker, viaPrepare, tmp)
	var kept []string // the live call's, and the look-alikes below
	for _, name := range callDirs(t, tmp) {
		if name != left[0] {
			kept = append(kept, name)
		}
	}
	writeFiles(t, outside, map[string]string{"keep": "not a call's"})
	if err := os.Symlink(outside, filepath.Join(tmp, "basis-call-link")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, tmp, map[string]string{"basis-call-file": "not a directory"})
	kept = append(kept, "basis-call-file", "basis-call-link")
	if os.Geteuid() == 0 {
		other := filepath.Join(tmp, "basis-call-other-user")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, "basis-call-other-user")
	}
	slices.Sort(kept)

	once := exec.Command(killed.Path)
	once.Dir = t.TempDir()
	once.Env = helperEnvWith(markerEnv+"="+marker, hostEnv+"="+hostOnce, "TMPDIR="+tmp)
	if out, err := once.CombinedOutput(); err != nil {
		t.Fatalf("a sandboxed run after the kill: %v\n%s", err, out)
	}
	if diff := cmp.Diff(kept, callDirs(t, tmp)); diff != "" {
		t.Errorf("call directories after the next run (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("what the look-alike link points to: %v", err)
	}
	if err := live.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}
