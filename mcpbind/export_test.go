//go:build unix

package mcpbind

import "github.com/modelcontextprotocol/go-sdk/mcp"

// SetConnectTo makes m reach every server through the transport connect
// returns, so unit tests run servers in memory.
func SetConnectTo(m *Manager, connect func(ServerConfig) mcp.Transport) { m.connectTo = connect }
