package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// With the kernel's inotify, the search trusts a directory's listing
// from the moment it is read until an event says it changed: no clock to
// wait for, no lookup of each directory, and a change anywhere in the
// tree — a repository made three levels down behind a modification time
// set back, a directory replaced by another, the workspace's path naming
// another directory, the kernel's queue of events overflowing — is found at the
// next search.
func TestListingsFollowEvents(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "parent")
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{".git", "a/b/c"} {
		mustMkdir(t, filepath.Join(ws, d))
	}
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ls := ownListings(t, sb, true)
	search := func(step string, want []string, reads int) {
		t.Helper()
		before := ls.reads
		got, err := sb.protectedPaths(ws)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for i, w := range want {
			want[i] = filepath.Join(ws, w)
		}
		if diff := cmp.Diff(want, got); diff != "" || (reads >= 0 && ls.reads-before != reads) {
			t.Errorf("%s: read %d directories, want %d; found (-want +got):\n%s", step, ls.reads-before, reads, diff)
		}
	}
	search("first", []string{".git"}, 4)
	if ls.watch == nil {
		t.Skip("this kernel offers no inotify: listings go by their stamps (TestProtectedPathsRemembered)")
	}
	search("unchanged, at once", []string{".git"}, 0)

	deep := filepath.Join(ws, "a/b/c")
	old, err := os.Stat(deep)
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(deep, ".git"))
	if err := os.Chtimes(deep, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	search("a repository made three levels down", []string{".git", "a/b/c/.git"}, 1)

	// a/b moves aside and another a/b, a repository, takes its place.
	if err := os.Rename(filepath.Join(ws, "a/b"), filepath.Join(ws, "a/old")); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(ws, "a/b/.git"))
	search("a directory replaced", []string{".git", "a/b/.git", "a/old/c/.git"}, 4) // a, the new a/b, a/old and a/old/c

	// The directory the workspace is in moves aside, and another takes
	// its path: nothing happened to the workspace's directory, whose path
	// names another now.
	if err := os.Rename(parent, parent+"-moved"); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(ws, ".basis"))
	mustMkdir(t, filepath.Join(ws, "a"))
	search("the workspace replaced", []string{".basis"}, 3) // ws, .basis, a

	// More events than the kernel queues: one is lost, so nothing is
	// trusted, not even a directory no event was about.
	flood := filepath.Join(ws, "a")
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("the queue's bound is not known: %v", err)
	}
	n, err := strconv.Atoi(string(limit[:len(limit)-1]))
	if err != nil || n > 1<<16 {
		t.Skipf("the queue holds %q events: too many to overflow here", limit)
	}
	for i := range n + 1 {
		f, err := os.Create(filepath.Join(flood, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	search("after the queue overflowed", []string{".basis"}, 3)
	search("unchanged again", []string{".basis"}, 0)

	// The events can no longer be read (the instance is gone): nothing
	// live is trusted, and listings go by their stamps, read again while
	// their change times are fresh.
	ls.watch.close()
	mustMkdir(t, filepath.Join(ws, "a/.git"))
	search("the events unreadable", []string{".basis", "a/.git"}, 3)
}

// Searches running while the tree changes, their events read by one
// another, leave no listing live that missed a change: once the changes
// stop, a search finds exactly what is there.
func TestListingsUnderConcurrentChanges(t *testing.T) {
	ws := t.TempDir()
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ownListings(t, sb, true)
	dirs := []string{"a", "a/b", "c", "c/d/e"}
	for _, d := range dirs {
		mustMkdir(t, filepath.Join(ws, d))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := sb.protectedPaths(ws); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	final := map[string]bool{}
	for i := range 400 {
		d := filepath.Join(ws, dirs[i%len(dirs)], ".git")
		if final[d] {
			if err := os.Remove(d); err != nil {
				t.Fatal(err)
			}
		} else {
			mustMkdir(t, d)
		}
		final[d] = !final[d]
		if i%7 == 0 {
			runtime.Gosched()
		}
	}
	// A last change the searches may be reading while it happens.
	last := filepath.Join(ws, "c/d/e/.git")
	if final[last] {
		os.Remove(last)
	} else {
		mustMkdir(t, last)
	}
	final[last] = !final[last]
	close(stop)
	wg.Wait()
	var want []string
	for d, there := range final {
		if there {
			want = append(want, d)
		}
	}
	slices.Sort(want)
	got, err := sb.protectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("after the changes stopped (-want +got):\n%s", diff)
	}
}

// A process's first searches watch nothing: a process that searches once
// or twice, as `basis call` does, would wait at its exit for the kernel
// to end a watch it had no use for. From the next search on, what it
// lists is watched.
func TestFewSearchesMakeNoInotifyInstance(t *testing.T) {
	ws := t.TempDir()
	sb, err := New(Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ls := &listings{}
	t.Cleanup(func() { ls.watch.close() })
	sb.listings = ls
	for i := range searchesBeforeWatch {
		if _, err := sb.protectedPaths(ws); err != nil {
			t.Fatal(err)
		}
		if ls.watchTried || len(ls.live) != 0 {
			t.Fatalf("search %d made a watch", i+1)
		}
	}
	if _, err := sb.protectedPaths(ws); err != nil {
		t.Fatal(err)
	}
	if !ls.watchTried {
		t.Fatalf("search %d made no watch", searchesBeforeWatch+1)
	}
	if ls.watch != nil && len(ls.live) != 1 {
		t.Errorf("after search %d, %d listings are live, want the workspace's", searchesBeforeWatch+1, len(ls.live))
	}
}
