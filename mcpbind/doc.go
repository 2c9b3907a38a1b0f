// Package mcpbind binds MCP servers as tools, through the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk). The server side, which
// serves a runtime's tools to MCP clients, is package mcpserve.
//
// Configuration is the .mcp.json format other agents read too:
//
//	{"mcpServers": {
//	  "git":     {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "${GIT_TOKEN}"}},
//	  "tickets": {"type": "http", "url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"}}
//	}}
//
// [Open] (or [Load] then [NewManager]) layers the workspace's
// <root>/.mcp.json over the operator's <config dir>/mcp.json over servers
// a host supplies, a name in a more specific layer shadowing the same name
// below it. A workspace file is code a repository asks to run: its
// servers start only once the operator trusted the file's exact content
// and the files its servers run ([TrustStore.Trust], "basis mcp trust").
// Problems are [*configfile.Error] values that never quote a value; env
// and header values live in [*Values], which print only names. ${VAR}
// placeholders are expanded when a server starts: an unset one, or a
// workspace server's cwd outside the workspace, makes only that server
// unavailable.
//
// A [Manager] starts servers lazily or all at once, each under a startup
// timeout. A stdio server leads a session and process group of its own
// with no controlling terminal, is killed whole when the Manager closes
// (on Linux also when this process dies), inherits the environment
// without credential-looking names unless [ManagerOptions.PassEnv] names
// them, and runs confined by [ManagerOptions.Sandbox]. Each server tool
// becomes a [*Tool] named "mcp__<server>__<tool>" ([ToolName]).
//
// Every file but this one is for Unix: the package starts programs.
package mcpbind
