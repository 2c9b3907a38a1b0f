// Package examples holds the programs behind the example workspace's
// declared tools (examples/workspace/.basis/tools.json) and the small MCP
// server its .mcp.json names (examples/mcpserver). Each tool program reads
// one JSON object from stdin — the input the model filled in — and prints
// its answer on stdout; the MCP server speaks MCP over stdio. `make demo`
// builds them all into examples/workspace/.basis/bin.
package examples
