//go:build unix

package mcpbind

import (
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SetConnectTo makes m reach every server through the transport connect
// returns, so unit tests run servers in memory.
func SetConnectTo(m *Manager, connect func(ServerConfig) mcp.Transport) { m.connectTo = connect }

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
	ErrTrustStore       = errTrustStore
	ErrPlaceholder      = configfile.ErrPlaceholder
	ErrUnsetVariable    = configfile.ErrUnsetVariable
	ErrInvalidInput     = contract.ErrInvalidInput
)
