//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"slices"
)

// Open reads the config files as [Load] does and returns the Manager of
// their well-formed servers, starting nothing; each problem is one error
// of [Manager.Problems].
func Open(ctx context.Context, load *LoadOptions, opts *ManagerOptions) *Manager {
	cfg, err := Load(ctx, load)
	m := NewManager(cfg, opts)
	m.problems = leaves(err)
	return m
}

// leaves splits what errors.Join joined into its errors, one per problem.
func leaves(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if _, own := err.(*problem); !ok || own {
		if err == nil {
			return nil
		}
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// Config returns the configuration the Manager runs.
func (m *Manager) Config() *Config { return m.cfg }

// Problems returns what [Open] found wrong in the config files, one
// error (a [*configfile.Error], or a trust store problem) each.
func (m *Manager) Problems() []error { return slices.Clone(m.problems) }

// StartFor starts the servers a tool named toolName could come from.
func (m *Manager) StartFor(ctx context.Context, toolName string) error {
	var errs []error
	for _, server := range m.serversFor(toolName) {
		if _, err := m.ServerTools(ctx, server); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
