//go:build unix

package configfile_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/basis-go/basis/configfile"
)

// ReadProblem words every way Read fails, naming what was found and never
// what the file holds.
func TestReadProblem(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2<<10+1), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		ctx  context.Context
		path string
		want string
	}{
		{context.Background(), filepath.Join(dir, "none"), "does not exist"},
		{context.Background(), fifo, "is not a regular file (it is a named pipe); a manifest must be one"},
		{context.Background(), big, "is larger than 2 KiB"},
		{cancelled, big, "was not read: context canceled"},
	}
	for _, tt := range tests {
		_, err := configfile.Read(tt.ctx, tt.path, 2<<10)
		if got := configfile.ReadProblem(tt.ctx, err, 2<<10, "a manifest"); got != tt.want {
			t.Errorf("%s: ReadProblem = %q, want %q", tt.path, got, tt.want)
		}
	}
	if got := configfile.Reason(&os.PathError{Op: "open", Path: "/secret/path", Err: syscall.EACCES}); got != "permission denied" {
		t.Errorf("Reason = %q, want the OS's words without the path", got)
	}
}
