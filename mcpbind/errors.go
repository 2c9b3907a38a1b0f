//go:build unix

package mcpbind

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels a caller branches on, through [errors.Is] on a [*ServerError].
var (
	// ErrStart: a server did not start or finish the MCP handshake in
	// time. A host branches on it (and on [ErrServerDied]) to tell a call
	// that could not run from one refused (untrusted, unavailable):
	// basis exits 1 for the first and 3 for the second.
	ErrStart = errors.New("MCP server failed to start")
	// ErrServerDied: the connection ended during a call, which is not
	// retried (the next restarts the server). Branched on as [ErrStart].
	ErrServerDied = errors.New("MCP server died")
)

// What the package's errors wrap besides the two sentinels, so that its
// own code (and its tests) can tell them apart; a caller reads the
// message, which says what to fix.
var (
	// errUnreadable: a config file exists but cannot be read (permissions,
	// not a regular file, too large, an I/O error).
	errUnreadable = errors.New("MCP config cannot be read")
	// errOutsideWorkspace: something a workspace's .mcp.json names lies
	// outside the workspace: the file itself (its real path), or a stdio
	// server's cwd once expanded and its links followed. The sandbox lets
	// a server write in its working directory, so a repository could
	// otherwise make any directory writable.
	errOutsideWorkspace = errors.New("outside the workspace")
	errSyntax           = errors.New("not valid JSON")
	errMissingField     = errors.New("missing field")
	errWrongType        = errors.New("wrong JSON type")
	errUnknownType      = errors.New("unknown server type")
	errDuplicateKey     = errors.New("duplicate key")
	// errInvalidValue: an empty command, a timeout out of range, a server
	// name that sanitises to the same tool prefix as another's, a NUL
	// byte, a ${BASIS_...} placeholder.
	errInvalidValue  = errors.New("invalid value")
	errUntrusted     = errors.New("untrusted: run basis mcp trust")
	errUnknownServer = errors.New("unknown MCP server")
	errToolError     = errors.New("MCP tool reported an error")
	errProtocol      = errors.New("MCP protocol error")
	errCallTimeout   = errors.New("MCP call timed out")
	errNameCollision = errors.New("MCP tool name collision")
	// errToolListBound: a server's tools/list went past a bound — more
	// than 100 pages, 10,000 tools or 16 MiB of tool definitions — or
	// repeated a cursor. None of its tools is offered.
	errToolListBound = errors.New("MCP server's tool list is past a bound")
	errClosed        = errors.New("MCP manager closed")
)

// subjectOf is a config error's Subject for a server: "server NAME", or
// "" for a problem of the file as a whole.
func subjectOf(server string) string {
	if server == "" {
		return ""
	}
	return "server " + server
}

// ServerError is a failure of one server; configured values are cut out.
type ServerError struct {
	// Op is what was being done: "start", "list tools", "call tool NAME".
	Server string
	Op     string
	// Stderr is the end (at most 64 KiB) of a stdio server's stderr.
	Stderr string
	// Err says what happened ([ErrStart], [ErrServerDied], …).
	Err error
}

// Error returns the message: `MCP server "tickets": call tool create: …`.
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
