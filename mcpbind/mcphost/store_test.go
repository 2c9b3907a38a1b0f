//go:build unix

package mcphost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
)

// The store forgets a file on Untrust, and what it trusted is what Load
// finds trusted: the same path, the same content.
func TestTrustStoreTrustAndUntrust(t *testing.T) {
	root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	file := filepath.Join(root, ".mcp.json")
	writeFile(t, file, `{"mcpServers": {"repo": {"command": "x"}}}`)
	ctx := context.Background()
	store := mcphost.NewTrustStore(conf)
	rec, err := store.Trust(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Path != file || len(rec.SHA256) != 64 {
		t.Errorf("record = %+v", rec)
	}
	if info, err := os.Stat(store.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trust store mode: %v, %v", info, err)
	}
	if state, _, err := store.Trusted(ctx, rec.Path, rec.SHA256); state != mcpbind.Trusted || err != nil {
		t.Errorf("Trusted(its record) = %v, %v", state, err)
	}
	if state, _, err := store.Trusted(ctx, rec.Path, strings.Repeat("0", 64)); state != mcpbind.Changed || err != nil {
		t.Errorf("Trusted(other content) = %v, %v; want changed", state, err)
	}
	if state, _, err := store.Trusted(ctx, filepath.Join(root, "other.json"), rec.SHA256); state != mcpbind.Untrusted || err != nil {
		t.Errorf("Trusted(another file) = %v, %v; want untrusted", state, err)
	}
	if ok, err := store.Untrust(ctx, file); !ok || err != nil {
		t.Fatalf("Untrust = %v, %v", ok, err)
	}
	list, err := store.List(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("List after untrust = %v, %v", list, err)
	}
}

func TestTrustStoreWritableByOthersCountsForNothing(t *testing.T) {
	root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	file := filepath.Join(root, ".mcp.json")
	writeFile(t, file, `{"mcpServers": {"repo": {"command": "x"}}}`)
	store := mcphost.NewTrustStore(conf)
	if _, err := store.Trust(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: store})
	if !errors.Is(err, mcphost.ErrTrustStore) {
		t.Errorf("Load = %v, want ErrTrustStore", err)
	}
	if cfg.Trust("repo") == mcpbind.Trusted {
		t.Errorf("a world-writable trust store was believed")
	}
}

func TestTrustRefusesAFileThatIsNoMCPConfig(t *testing.T) {
	root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	store := mcphost.NewTrustStore(conf)
	tests := []struct {
		name, content string
		want          string
	}{
		{"not JSON", `{"mcpServers": `, ".mcp.json:1:16: "},
		{"no mcpServers", `{"servers": {}}`, `.mcp.json:1:1: mcpServers: missing`},
	}
	for _, tt := range tests {
		file := filepath.Join(root, ".mcp.json")
		writeFile(t, file, tt.content)
		var ce *configfile.Error
		if _, err := store.Trust(context.Background(), file); !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Trust = %v, want %v", tt.name, err, tt.want)
		}
	}
	// A server-level problem is no reason to refuse: that server is
	// reported when the file loads, and the others work.
	file := filepath.Join(root, ".mcp.json")
	writeFile(t, file, `{"mcpServers": {"a": {"type": "bogus"}, "b": {"command": "x"}}}`)
	if _, err := store.Trust(context.Background(), file); err != nil {
		t.Errorf("Trust of a file with one bad server = %v", err)
	}
	list, err := store.List(context.Background())
	if err != nil || len(list) != 1 || list[0].Path != file {
		t.Errorf("List = %v, %v; want only the last file", list, err)
	}
}

// TestTrustStoreWritesThroughALinkAndKeepsItPrivate: a store kept as a
// link into a dotfiles repository stays a link, its target is replaced
// whole, and a new store is readable by the operator only.
func TestTrustStoreWritesThroughALinkAndKeepsItPrivate(t *testing.T) {
	root, dotfiles := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	file := filepath.Join(root, ".mcp.json")
	writeFile(t, file, `{"mcpServers": {"a": {"command": "x"}}}`)
	ctx := context.Background()

	fresh := mcphost.NewTrustStore(filepath.Join(realDir(t, t.TempDir()), "new", "dir"))
	if _, err := fresh.Trust(ctx, file); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(fresh.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a new store: %v, %v; want mode 0600", info, err)
	}

	conf := realDir(t, t.TempDir())
	target := filepath.Join(dotfiles, "trust.json")
	writeFile(t, target, `{"trusted": []}`)
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	store := mcphost.NewTrustStore(conf)
	if err := os.Symlink(target, store.Path()); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Trust(ctx, file); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(store.Path()); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", info, err)
	}
	info, err := os.Stat(target)
	if err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("target: %v, %v; want its mode 0640 kept", info, err)
	}
	list, err := store.List(ctx)
	if err != nil || len(list) != 1 || list[0].Path != file {
		t.Errorf("List = %v, %v; want the trusted file", list, err)
	}
}
