// Package mcpbind binds MCP servers as tools, through the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk); package mcpserve is the
// server side.
//
// [Open] reads the workspace's .mcp.json, the operator's mcp.json and a
// host's servers, and returns a [Manager] that starts them and offers each
// server tool as a [*Tool] named "mcp__<server>__<tool>". A workspace file
// runs only once the operator trusted it ([TrustStore]). The format, the
// layers, trust, naming and the output budget are described in the
// README and docs/mcp-client.md.
//
// Every file but this one is for Unix: the package starts programs.
package mcpbind
