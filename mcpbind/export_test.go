//go:build unix

package mcpbind

import (
	"context"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SetConnectTo makes m reach every server through the transport connect
// returns, so unit tests run servers in memory.
func SetConnectTo(m *Manager, connect func(ServerConfig) mcp.Transport) { m.connectTo = connect }

// SetListenWait sets how long a server's first tools/list waits for the
// server to say it listens, and returns the function that restores it.
func SetListenWait(d time.Duration) (restore func()) {
	old := listenWait
	listenWait = d
	return func() { listenWait = old }
}

// The errors the package's own tests tell apart; callers outside read
// the messages.
var (
	ErrUnreadable       = errUnreadable
	ErrOutsideWorkspace = errOutsideWorkspace
	ErrSyntax           = errSyntax
	ErrMissingField     = errMissingField
	ErrWrongType        = errWrongType
	ErrUnknownType      = errUnknownType
	ErrDuplicateKey     = errDuplicateKey
	ErrInvalidValue     = errInvalidValue
	ErrUntrusted        = errUntrusted
	ErrUnknownServer    = errUnknownServer
	ErrToolError        = errToolError
	ErrProtocol         = errProtocol
	ErrCallTimeout      = errCallTimeout
	ErrNameCollision    = errNameCollision
	ErrToolListBound    = errToolListBound
	ErrClosed           = errClosed
	ErrPlaceholder      = configfile.ErrPlaceholder
	ErrUnsetVariable    = configfile.ErrUnsetVariable
	ErrInvalidInput     = contract.ErrInvalidInput
)

// What only the tests reach of the package's internals.
var ParseConfig = parseConfig

const DefaultCloseGrace = defaultCloseGrace

func (s ServerConfig) CheckVariables(lookup func(string) (string, bool)) error {
	return s.checkVariables(lookup)
}

func (v *Values) Each(fn func(name, value string)) { v.each(fn) }
func (v *Values) Names() []string                  { return v.nameList() }

func (m *Manager) Start(ctx context.Context, name string) error { return m.start(ctx, name) }

// Unexported helpers the package's own external tests reach.
var EstimateTokens = estimateTokens

func RemoteName(t *Tool) string                        { return t.remoteName() }
func ServerFor(m *Manager, name string) (string, bool) { return m.serverFor(name) }
func ExposedName(c ServerConfig, name string) string   { return c.exposedName(name) }
