//go:build linux

package declared

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHashCacheNeverServesARewrittenFile: a hash is remembered only for a
// file whose change time was well in the past when it was hashed, and a
// rewrite — same size, modification time put back — is hashed again,
// because the kernel moved its change time.
func TestHashCacheNeverServesARewrittenFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "program")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh\necho one\n")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := &hashCache{now: func() time.Time { return now }}

	first, err := c.hash(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.sums) != 0 {
		t.Fatalf("a file changed %v ago was remembered: its change time may share the clock's tick with the next write", time.Since(info.ModTime()))
	}
	// An hour on, the same version is remembered.
	now = now.Add(time.Hour)
	if again, err := c.hash(ctx, path); err != nil || again != first || len(c.sums) != 1 {
		t.Fatalf("hash = %s, %v; %d remembered; want %s and 1", again, err, len(c.sums), first)
	}
	// Rewritten with the same size and its modification time put back:
	// the change time still moves.
	write("#!/bin/sh\necho two\n")
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	second, err := c.hash(ctx, path)
	if err != nil || second == first {
		t.Fatalf("after a rewrite: %s, %v; want a new hash", second, err)
	}
	// Cancelled: no hash.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	c = &hashCache{now: time.Now}
	if _, err := c.hash(cancelled, path); err == nil {
		t.Error("a cancelled hash returned no error")
	}
}
