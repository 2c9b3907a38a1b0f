//go:build unix

package mcpbind

import (
	"context"
	"path/filepath"
	"slices"
)

// Check is what a checker such as basis check reports, one error per
// problem: the config files' problems, each server's ${VAR}s and cwd
// (see [ServerConfig.Check]) and, with start, each trusted server's
// start. With start it also lists the tools' names by server, sorted;
// [Manager.Close] stops the servers it started.
func (m *Manager) Check(ctx context.Context, start bool) (problems []error, tools map[string][]string) {
	problems = m.Problems()
	for _, s := range m.cfg.Servers {
		if err := s.Check(m.opts.Lookup); err != nil {
			problems = append(problems, err)
		}
	}
	if !start {
		return problems, nil
	}
	problems = append(problems, leaves(m.StartAll(ctx))...)
	tools = map[string][]string{}
	for _, t := range m.Tools() {
		server := t.Descriptor().Name
		if mt, ok := t.(*Tool); ok {
			server = mt.Server()
		}
		tools[server] = append(tools[server], t.Descriptor().Name)
	}
	for _, names := range tools {
		slices.Sort(names)
	}
	return problems, tools
}

// WorkspaceFile is the path under which a [TrustStore] records the
// .mcp.json of the workspace at root: symbolic links resolved, those of
// root alone when the file is gone, so that it can still be untrusted.
func WorkspaceFile(root string) string {
	path := filepath.Join(root, WorkspaceFileName)
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved
	}
	if dir, err := filepath.EvalSymlinks(root); err == nil {
		return filepath.Join(dir, WorkspaceFileName)
	}
	return path
}
