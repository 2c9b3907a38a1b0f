//go:build !nomcp

package main

import "github.com/basis-go/basis/mcpbind"

// manager is the MCP client served now: its servers' resources, prompts
// and completions are served beside the tools.
func (s *serving) manager() *mcpbind.Manager {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.mcp
}
