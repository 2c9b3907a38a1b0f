// Package mcpserve serves a roster of tools as an MCP server, through the
// official MCP Go SDK: what `basis serve` is built on, and what a Go host
// uses to offer its runtime's tools to MCP clients.
//
// A host serves its runtime ([RuntimeRoster]), or any [Roster] (tools,
// and a call through a whole pipeline), over stdio ([Server.Serve]) or
// streamable HTTP behind a bearer token ([Server.ListenAndServe]). Every
// failure and refusal comes back as a tool result with isError set, never
// a protocol error, so the model reads what went wrong. Calls run
// concurrently; one client's tools that are not Parallel run one at a
// time. A [ChangingRoster] is followed while serving; [Server.Refresh]
// brings the list up to date after any other change. [ElicitApprover],
// the gate's approver, asks the client's user through form elicitation.
package mcpserve
