//go:build unix

package signin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind/signin"
)

const (
	canaryAccess  = "at-canary-31c4"
	canaryRefresh = "rt-canary-8d0f"
	canarySecret  = "cs-canary-aa17"
)

// TestFileStoreRefusesWhatOthersControl: the directory and files
// must be the user's own, not links, readable by no one else.
func TestFileStoreRefusesWhatOthersControl(t *testing.T) {
	tok := &signin.Token{ServerURL: "https://h.example/mcp", Issuer: "https://as.example", TokenURL: "https://as.example/token",
		AccessToken: canaryAccess, RefreshToken: canaryRefresh, ClientSecret: canarySecret, Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		name  string
		spoil func(t *testing.T, dir, file string)
		want  string // "" means it works
	}{
		{"as made", func(*testing.T, string, string) {}, ""},
		{"file group-readable", func(t *testing.T, _, file string) { os.Chmod(file, 0o640) }, "may be read by group or others (mode 640); run: chmod 600"},
		{"directory world-readable", func(t *testing.T, dir, _ string) { os.Chmod(dir, 0o705) }, "may be read by group or others (mode 705); run: chmod 700"},
		{"file is a link", func(t *testing.T, _, file string) {
			os.Rename(file, file+".real")
			os.Symlink(file+".real", file)
		}, "is a symbolic link"},
		{"directory is a link", func(t *testing.T, dir, _ string) {
			os.Rename(dir, dir+".real")
			os.Symlink(dir+".real", dir)
		}, "is a symbolic link"},
		{"directory another user's", func(t *testing.T, dir, _ string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a directory away")
			}
			os.Chown(dir, 65534, 65534)
		}, "belongs to another user"},
		{"file another user's", func(t *testing.T, _, file string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file away")
			}
			os.Chown(file, 65534, 65534)
		}, "belongs to another user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := signin.NewFileStore(filepath.Join(t.TempDir(), "mcp-tokens"))
			if err := store.Save(context.Background(), tok); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(store.Dir(), "*"))
			if len(files) != 1 {
				t.Fatalf("the store holds %v, want one file and no temporary one", files)
			}
			for path, mode := range map[string]os.FileMode{store.Dir(): 0o700, files[0]: 0o600} {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != mode {
					t.Errorf("%s: mode %o, want %o", path, fi.Mode().Perm(), mode)
				}
			}
			tt.spoil(t, store.Dir(), files[0])
			got, err := store.Load(context.Background(), tok.ServerURL)
			if tt.want == "" {
				if err != nil || got.AccessToken != canaryAccess || got.RefreshToken != canaryRefresh || got.ClientSecret != canarySecret {
					t.Fatalf("Load = %v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load error %v, want %q", err, tt.want)
			}
			if err := store.Save(context.Background(), tok); err == nil {
				t.Errorf("Save wrote where Load refuses")
			}
		})
	}
}
