//go:build unix

package testserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallIDs writes down the JSON-RPC id of the last tools/call a server's
// connection read: the id the server saw, which the SDK keeps from its
// handlers. With [Options.CallIDs] the tool tracecontext reports it.
type CallIDs struct {
	mu   sync.Mutex
	last string
}

// Last returns the id of the last tools/call read, in its JSON text for
// a string ("\"x\"") and its digits for a number; "" before any.
func (c *CallIDs) Last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Transport returns t whose connections write down what they read in c.
func (c *CallIDs) Transport(t mcp.Transport) mcp.Transport {
	return idTransport{t, c}
}

type idTransport struct {
	mcp.Transport
	c *CallIDs
}

func (t idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return idConn{conn, t.c}, nil
}

type idConn struct {
	mcp.Connection
	c *CallIDs
}

func (c idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Request); ok && err == nil && r.Method == "tools/call" {
		c.c.mu.Lock()
		switch v := r.ID.Raw().(type) {
		case string:
			c.c.last = fmt.Sprintf("%q", v)
		default:
			c.c.last = fmt.Sprint(v)
		}
		c.c.mu.Unlock()
	}
	return msg, err
}
