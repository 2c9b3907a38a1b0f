//go:build unix

package mcpbind

import (
	"errors"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
)

// Sentinels for [errors.Is]. Every [*ConfigError] wraps one of the config
// sentinels; every [*ServerError] wraps one of the server sentinels.
var (
	// ErrUnreadable: a config file exists but cannot be read (permissions,
	// not a regular file, too large, an I/O error).
	ErrUnreadable = errors.New("MCP config cannot be read")
	// ErrOutsideWorkspace: something a workspace's .mcp.json names lies
	// outside the workspace. Either the file itself is a symbolic link (or
	// lies under one) whose real path is outside (its servers are not
	// used; the error also wraps [configfile.ErrOutsideRoot]), or a stdio
	// server's cwd leads outside once its placeholders are expanded and
	// its symbolic links followed: the sandbox lets a server write in its
	// working directory, so a repository could otherwise make any
	// directory writable. Only that server is unavailable then; the
	// operator's mcp.json may name any directory.
	ErrOutsideWorkspace = errors.New("outside the workspace")
	// ErrSyntax: a config file is not valid JSON.
	ErrSyntax = errors.New("not valid JSON")
	// ErrMissingField: "mcpServers" is missing, or a server has neither
	// "command" nor "url".
	ErrMissingField = errors.New("missing field")
	// ErrWrongType: a field holds the wrong kind of JSON value.
	ErrWrongType = errors.New("wrong JSON type")
	// ErrUnknownType: a server's "type" is not stdio, http or sse.
	ErrUnknownType = errors.New("unknown server type")
	// ErrDuplicateKey: a key or server name written twice in one object.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrInvalidValue: a value that is not allowed: an empty command, a
	// timeout out of range, a server name that sanitises to the same tool
	// prefix as another's, a NUL byte, a ${BASIS_...} placeholder.
	ErrInvalidValue = errors.New("invalid value")
	// ErrPlaceholder: a malformed ${...} placeholder.
	ErrPlaceholder = errors.New("malformed placeholder")
	// ErrUnsetVariable: a ${VAR} without a default names a variable that
	// is not set. Only the server that uses it is unavailable.
	ErrUnsetVariable = errors.New("unset variable")

	// ErrUntrusted: a workspace config file's servers were not started
	// because the operator has not trusted the file (or it changed since).
	ErrUntrusted = errors.New("untrusted: run basis mcp trust")
	// ErrUnknownServer: no configured server has that name.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrStart: a server could not be started or did not finish the MCP
	// handshake within its startup timeout.
	ErrStart = errors.New("MCP server failed to start")
	// ErrServerDied: the server's connection ended while a call was in
	// flight. The call is not retried; the next call restarts the server.
	ErrServerDied = errors.New("MCP server died")
	// ErrToolError: the server ran the tool and reported an error
	// (isError).
	ErrToolError = errors.New("MCP tool reported an error")
	// ErrProtocol: the server answered a request with a protocol error
	// (an unknown tool, invalid parameters, an internal error).
	ErrProtocol = errors.New("MCP protocol error")
	// ErrCallTimeout: the server did not answer a call within its deadline.
	ErrCallTimeout = errors.New("MCP call timed out")
	// ErrNameCollision: two tools of one server sanitise to the same
	// basis tool name.
	ErrNameCollision = errors.New("MCP tool name collision")
	// ErrToolListBound: a server's tools/list went past a bound — more
	// than 100 pages, 10,000 tools or 16 MiB of tool definitions — or
	// repeated a cursor. None of its tools is offered.
	ErrToolListBound = errors.New("MCP server's tool list is past a bound")
	// ErrClosed: the [Manager] was closed.
	ErrClosed = errors.New("MCP manager closed")

	// ErrInvalidInput is [contract.ErrInvalidInput]: a call's input is not
	// one JSON object.
	ErrInvalidInput = contract.ErrInvalidInput
)

// ConfigError is one problem with an MCP config file. Its message is one
// line naming the file, the position, the server and the field — never a
// value from the file, since values may be credentials. The one exception
// is a server's "type", a keyword, which is quoted so the reader sees what
// was written.
type ConfigError struct {
	// File is the config file's path; empty for a server a host supplied.
	File string
	// Line and Column locate the problem, both 1-based; 0 when there is
	// no position.
	Line, Column int
	// Server is the server's name; empty for problems of the file as a
	// whole.
	Server string
	// Field is the field at fault as the file spells it: "command",
	// "args[1]", "env.API_TOKEN", "headers.Authorization".
	Field string
	// Variable is the variable a ${VAR} placeholder names, when the
	// problem is about one.
	Variable string
	// Err says what is wrong and what to do; it wraps one of the
	// package's sentinels.
	Err error
}

// Error returns the one-line message, such as
//
//	/repo/.mcp.json:4:14: server github: type: unknown type "websocket"; use stdio, http or sse
func (e *ConfigError) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "host-supplied MCP servers"
	}
	b.WriteString(file)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column))
	}
	if e.Server != "" {
		b.WriteString(": server " + e.Server)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, which wraps one of the package's sentinels.
func (e *ConfigError) Unwrap() error { return e.Err }

// ServerError is a failure of one server: it could not start, it died, it
// answered a call with an error. Its message names the server and, for a
// stdio server that failed or died, quotes the end of its stderr (with any
// configured env or header value cut out).
type ServerError struct {
	// Server is the server's name.
	Server string
	// Op is what was being done: "start", "list tools", "call tool NAME".
	Op string
	// Stderr is the end of the server's stderr (at most 64 KiB), for a
	// stdio server that failed to start or died; otherwise empty.
	Stderr string
	// Err says what happened; it wraps one of the package's sentinels.
	Err error
}

// Error returns the message, such as
//
//	MCP server "tickets": call tool create: MCP server died: connection closed; its stderr ends with:
//	panic: ...
func (e *ServerError) Error() string {
	var b strings.Builder
	b.WriteString("MCP server " + strconv.Quote(e.Server))
	if e.Op != "" {
		b.WriteString(": " + e.Op)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if tail := strings.TrimRight(e.Stderr, "\n"); tail != "" {
		b.WriteString("; its stderr ends with:\n" + tail)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// problem is the cause inside an error: a message that reads naturally and
// a sentinel for errors.Is.
type problem struct {
	kind  error
	cause error // the operating system's or SDK's reason, when there is one
	text  string
}

func (p *problem) Error() string { return p.text }

func (p *problem) Unwrap() []error {
	if p.cause != nil {
		return []error{p.kind, p.cause}
	}
	return []error{p.kind}
}

func newProblem(kind error, text string) error { return &problem{kind: kind, text: text} }
