//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
)

// Sandboxed programs get a cache of basis's own, per workspace, through
// the variables their tools read; the operator's cache stays read-only
// (TestWrites) and another workspace's cache is out of reach.
func TestCache(t *testing.T) {
	requireSandbox(t)
	userCache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory")
	}
	workspace, other := t.TempDir(), t.TempDir()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	cache := sb.CacheDir()
	t.Cleanup(func() { os.RemoveAll(cache) })
	otherCache := newSandbox(t, sandbox.Policy{}, other).CacheDir()
	if !strings.HasPrefix(cache, filepath.Join(userCache, "basis")+"/") || cache == otherCache {
		t.Fatalf("cache %q (other workspace %q): want one per workspace under %s/basis/", cache, otherCache, userCache)
	}
	if err := os.MkdirAll(otherCache, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(otherCache) })

	for _, name := range []string{"XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE", "npm_config_cache", "PIP_CACHE_DIR", "YARN_CACHE_FOLDER"} {
		t.Run(name, func(t *testing.T) {
			// The operator's own value is inherited, and replaced.
			cmd := exec.Command(helper, "env", name)
			cmd.Dir = workspace
			cmd.Env = []string{name + "=" + filepath.Join(userCache, "operators"), "HOME=" + os.Getenv("HOME")}
			start, release, err := sb.Prepare(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			var out strings.Builder
			cmd.Stdout = &out
			if err := start(); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(out.String()); got != cache && !strings.HasPrefix(got, cache+"/") {
				t.Fatalf("$%s = %q, want the sandbox's cache %s", name, got, cache)
			}
			if got := runHelper(t, sb, workspace, "writeenv", name, "entry"); !got.ok {
				t.Fatalf("writing in $%s: %s", name, got.output)
			}
		})
	}
	t.Run("another workspace's cache", func(t *testing.T) {
		got := runHelper(t, sb, workspace, "write", filepath.Join(otherCache, "poison"))
		if got.ok || !permissionDenied(got.output) {
			t.Fatalf("ok = %v (%s), want a permission error", got.ok, got.output)
		}
	})
}

// A cache removed between calls — from outside: a program may write in
// it but not remove it — is made again for the next call, including one
// that would have used a thread kept from the calls before.
func TestCacheRemovedBetweenCallsIsMadeAgain(t *testing.T) {
	requireSandbox(t)
	if _, err := os.UserCacheDir(); err != nil {
		t.Skip("no user cache directory")
	}
	workspace := t.TempDir()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	cache := sb.CacheDir()
	t.Cleanup(func() { os.RemoveAll(cache) })
	// Three calls: from the second on, root's calls start from a thread
	// kept for them.
	for i := range 3 {
		if got := runHelper(t, sb, workspace, "writeenv", "GOCACHE", fmt.Sprint(i)); !got.ok {
			t.Fatalf("call %d writing in $GOCACHE: %s", i+1, got.output)
		}
	}
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := runHelper(t, sb, workspace, "writeenv", "GOCACHE", fmt.Sprint("after-", i)); !got.ok {
			t.Errorf("call %d after the cache was removed, writing in $GOCACHE: %s", i+1, got.output)
		}
	}
}
