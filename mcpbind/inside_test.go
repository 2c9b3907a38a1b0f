//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
)

// A workspace .mcp.json that links out of the workspace is refused,
// naming the link, and its servers are not used; a link within the
// workspace still works.
func TestWorkspaceConfigOutsideTheWorkspaceIsRefused(t *testing.T) {
	top := realDir(t, t.TempDir())
	good, hostile := filepath.Join(top, "good"), filepath.Join(top, "hostile")
	writeFile(t, filepath.Join(good, ".mcp.json"), `{"mcpServers": {"s": {"command": "./server"}}}`)
	if err := os.MkdirAll(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(hostile, ".mcp.json")
	if err := os.Symlink("../good/.mcp.json", link); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: hostile})
	if !errors.Is(err, mcpbind.ErrOutsideWorkspace) || !errors.Is(err, configfile.ErrOutsideRoot) ||
		!strings.HasPrefix(err.Error(), link+": is a symbolic link to "+filepath.Join(good, ".mcp.json")+", outside the workspace") {
		t.Fatalf("Load = %v, want ErrOutsideWorkspace naming the link", err)
	}
	if len(cfg.Servers) != 0 || len(cfg.Files) != 0 {
		t.Errorf("the linked file was used: servers %v, files %v", cfg.Servers, cfg.Files)
	}
	// A link within the workspace is fine.
	inside := filepath.Join(top, "inside")
	writeFile(t, filepath.Join(inside, "conf", "mcp.json"), `{"mcpServers": {"s": {"command": "./server"}}}`)
	if err := os.Symlink("conf/mcp.json", filepath.Join(inside, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	cfg, err = mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: inside})
	if err != nil || len(cfg.Servers) != 1 {
		t.Errorf("a link within the workspace: %v, %v", cfg.Servers, err)
	}
}
