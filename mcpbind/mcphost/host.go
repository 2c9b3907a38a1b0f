//go:build unix

package mcphost

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/signin"
	"github.com/basis-go/basis/subprocess"
)

// Host is what a workspace gives the MCP client of its config files;
// *workspace.Workspace is one.
type Host interface {
	Root() string
	ConfigDir() string
	Environ() []string
	PassEnv() []string
	Sandbox() subprocess.Confiner
}

// Open is [mcpbind.Open] for h's config files as the basis command opens
// them: ${VAR}s read from h.Environ, which stdio servers inherit but for
// what h.PassEnv does not let through; each stdio server confined by
// h.Sandbox (the operator gave it the network, not the right to write
// anywhere) and started through [subprocess.Track], since a live server
// is no orphan to sweep; trust and sign-ins kept in h.ConfigDir. The
// other fields of opts (nil: none) are kept.
func Open(ctx context.Context, h Host, opts *mcpbind.ManagerOptions) *mcpbind.Manager {
	o := mcpbind.ManagerOptions{}
	if opts != nil {
		o = *opts
	}
	environ := h.Environ()
	o.Lookup = func(name string) (string, bool) { return subprocess.LookupEnv(environ, name) }
	o.Env, o.PassEnv, o.Sandbox = environ, h.PassEnv(), h.Sandbox()
	o.Track = subprocess.Track
	o.Tokens = signin.NewFileStore(filepath.Join(h.ConfigDir(), mcpbind.TokensDirName))
	return mcpbind.Open(ctx, &mcpbind.LoadOptions{Root: h.Root(), ConfigDir: h.ConfigDir(), Trust: NewTrustStore(h.ConfigDir())}, &o)
}

// Load is [mcpbind.Load] of the workspace at root and configDir's
// mcp.json, with configDir's trust store.
func Load(ctx context.Context, root, configDir string) (*mcpbind.Config, error) {
	return mcpbind.Load(ctx, &mcpbind.LoadOptions{Root: root, ConfigDir: configDir, Trust: NewTrustStore(configDir)})
}

// ClientFiles are the files the MCP client of the workspace at root
// reads: its .mcp.json, the operator's mcp.json and the trust store, all
// in configDir; a host that serves for long watches them.
func ClientFiles(root, configDir string) []string {
	return []string{filepath.Join(root, mcpbind.WorkspaceFileName), filepath.Join(configDir, mcpbind.OperatorFileName), filepath.Join(configDir, TrustFileName)}
}

// WorkspaceFile is the path a [TrustStore] records root's .mcp.json
// under: links resolved (root's alone when the file is gone).
func WorkspaceFile(root string) string {
	path := filepath.Join(root, mcpbind.WorkspaceFileName)
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved
	}
	if dir, err := filepath.EvalSymlinks(root); err == nil {
		return filepath.Join(dir, mcpbind.WorkspaceFileName)
	}
	return path
}

// TrustWorkspace trusts the .mcp.json of the workspace at root as it is
// now, in configDir's [TrustStore], and returns its record and the
// servers it names. A file whose real path lies outside root (a link to
// another repository's) is refused with its [*configfile.OutsideError];
// an error matching fs.ErrNotExist says there is none.
func TrustWorkspace(ctx context.Context, root, configDir string) (TrustRecord, []string, error) {
	path := filepath.Join(root, mcpbind.WorkspaceFileName)
	var outside *configfile.OutsideError
	if _, err := configfile.Inside(root, path); errors.As(err, &outside) {
		return TrustRecord{}, nil, outside
	}
	rec, err := NewTrustStore(configDir).Trust(ctx, path)
	if err != nil {
		return TrustRecord{}, nil, err
	}
	var servers []string
	if cfg, _ := Load(ctx, root, configDir); cfg != nil {
		servers, _ = cfg.ServersIn(rec.Path)
	}
	return rec, servers, nil
}

// MayBeServerTool reports whether a tool named tool from source (a rule's
// tool and source, say) may be an MCP server's: one named mcp__…, or one
// from an MCP config file, since a server's tools may carry any name
// (tool_prefix).
func MayBeServerTool(tool, source string) bool {
	if strings.HasPrefix(tool, contract.MCPPrefix) {
		return true
	}
	base := filepath.Base(source)
	return base == mcpbind.WorkspaceFileName || base == mcpbind.OperatorFileName
}
