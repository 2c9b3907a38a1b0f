// Package signin is the operator's OAuth sign-in to a remote MCP server,
// apart from the client that needs it: the [Token] a sign-in yields, the
// [Store] that keeps it between runs ([FileStore], basis's), and the
// browser half of the flow — [Loopback], which sends the operator's
// browser to the authorization server and receives its answer on a
// loopback port, as `basis mcp login` does. A host hands these to
// mcpbind's ManagerOptions (Tokens, SignIn); the Manager runs the rest.
//
// It is named for what the operator does, not for the protocol: it holds
// no OAuth client of its own (go-sdk's auth package is that), and it does
// not import mcpbind, which imports it.
package signin
