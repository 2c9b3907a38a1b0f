// Package mcpbind binds MCP servers as tools, through the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk); package mcpserve is the
// server side.
//
// [Open] reads the workspace's .mcp.json, the operator's mcp.json and a
// host's servers, and returns a [Manager] that offers each server tool as
// a [*Tool] "mcp__<server>__<tool>"; a workspace file runs once trusted
// ([Trust]). The README and docs/mcp-client.md say the rest; package
// signin is the operator's sign-in to remote servers, package mcphost
// the trust store and a host's opening of its workspace's client.
//
// Every file but this one is for Unix: the package starts programs.
package mcpbind
