//go:build unix

package configfile_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestHashFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "program")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\n"))
	if got, err := configfile.HashFile(context.Background(), path); err != nil || got != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("HashFile = %s, %v", got, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if got, err := configfile.HashFile(context.Background(), link); err != nil || got != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("HashFile through a link = %s, %v", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO neither blocks nor hashes.
	if _, err := configfile.HashFile(context.Background(), fifo); !errors.Is(err, configfile.ErrNotRegular) {
		t.Errorf("HashFile of a FIFO: %v", err)
	}
	if _, err := configfile.HashFile(context.Background(), dir); !errors.Is(err, configfile.ErrNotRegular) {
		t.Errorf("HashFile of a directory: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := configfile.HashFile(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("HashFile cancelled: %v", err)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, dir string
		want      bool
	}{
		{"/repo", "/repo", true},
		{"/repo/a/b", "/repo", true},
		{"/repo/../etc", "/repo", false},
		{"/repository", "/repo", false},
		{"/anything", "/", true},
		{"/repo/a", "/repo/", true},
	}
	for _, tt := range tests {
		if got := configfile.Within(tt.path, tt.dir); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}
