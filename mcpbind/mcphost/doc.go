// Package mcphost is what a host does to open a workspace's MCP client
// as the basis command does: the operator's trust in a workspace's
// .mcp.json ([TrustStore]) and the client opened for a [Host] — its
// environment, sandbox, sign-ins and trust ([Open]).
//
// Package mcpbind is the client itself, and takes the trust store as an
// [mcpbind.Trust]. Every file but this one is for Unix.
package mcphost
