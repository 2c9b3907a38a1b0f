// Package mcpbind binds MCP servers as tools, through the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk).
//
// Configuration is the .mcp.json format other agents read too:
//
//	{"mcpServers": {
//	  "git":     {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "${GIT_TOKEN}"}},
//	  "tickets": {"type": "http", "url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"}}
//	}}
//
// [Load] layers the workspace's <root>/.mcp.json over the operator's
// <config dir>/mcp.json over servers a host supplies, a name in a more
// specific layer shadowing the same name below it — a workspace file only
// once the operator trusted it, so an untrusted one never hides the
// operator's server. A server name that would make tool names ambiguous
// ("__" in it, or mcp__<name>__ beginning another's) is refused, the
// operator's kept over the workspace's. Problems are
// [*configfile.Error] values naming the file, line, column, server and field,
// never a value. Env and header values live in [*Values], which print
// only names. ${VAR} and ${VAR:-default} are expanded when a server
// starts; an unset variable makes only that server unavailable, and so
// does a workspace server's cwd that leads outside the workspace
// ([errOutsideWorkspace], checked at every start). A stdio server
// inherits the environment basis runs in without basis's own BASIS_*
// variables and without names that look like credentials, unless
// [Options.PassEnv] or its own env names them (contract/childenv).
//
// A workspace file is code a repository asks to run: its servers start
// only after the operator trusted the file's exact content with
// [TrustStore.Trust] ("basis mcp trust"), which also pins the program
// and argument files its servers run from the workspace; until then, and
// after a pinned file changed, they are listed as untrusted and never
// started.
//
// A [Manager] starts servers lazily ([Manager.Start], [Manager.ServerTools])
// or all at once and concurrently ([Manager.StartAll]), each under a
// startup timeout. A stdio server leads a session of its own, with no
// controlling terminal (it cannot type into the operator's), and so a
// process group of its own, which is killed whole when the Manager
// closes; on Linux it dies with the process that started it, even by
// SIGKILL; [Options.Track] lets a host that sweeps orphaned processes
// know it; the end of its stderr is quoted when it fails. Each server tool becomes a [*Tool] named
// "mcp__<server>__<tool>" ([ToolName]) that implements
// [contract.ExecutableTool]: external side effect unless the operator
// trusts the server's annotations and the tool is read-only; a preview
// naming the server as configured; calls under a deadline, never retried
// when the server dies during one.
//
// Every file but this one is for Unix: the package starts programs.
package mcpbind
