// Package mcpbind binds MCP servers as tools, and serves basis's roster as an
// MCP server, through the official MCP Go SDK.
package mcpbind
