package contract

// MCPRequest describes one MCP request basis sends to a server, for an
// observer (tracing): what the MCP semantic conventions record of it. It
// never holds arguments or results.
type MCPRequest struct {
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Target is what the request names: the tool of a tools/call, the
	// prompt of a prompts/get, the URI of a resources/read; else empty.
	Target string
	// Server is the server's name in basis's configuration.
	Server string
	// ProtocolVersion and SessionID are the session's, when it has them.
	ProtocolVersion string
	SessionID       string
	// Transport is the network transport: "pipe" for a stdio server,
	// "tcp" for one over HTTP.
	Transport string
	// RequestID, when set, returns the request's JSON-RPC id in its
	// string form (a number's decimal digits), or "" while none is known.
	// The id is given as the request is written, after the observer is
	// told of the request, so an observer asks when the request ends.
	RequestID func() string
}
