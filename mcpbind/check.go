//go:build unix

package mcpbind

import (
	"context"
	"slices"
)

// Check is what basis check reports, an error a problem: the files',
// each server's [ServerConfig.Check] and, with start, each trusted
// server's start and its tools' names, sorted (Close stops them).
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
