//go:build unix

package mcpbind

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heardWait bounds how long a call's result waits for the handling of
// the server's notifications read before it. It is a safety bound only:
// a notification the SDK never hands to its handler (one it cannot
// decode) would otherwise hold every later call.
const heardWait = time.Second

// heard counts a server's log and progress notifications as its session
// reads them and as their handlers finish with them. The SDK hands
// notifications to their handlers on a queue of their own and a call's
// result to the caller at once, so a log message a server sends just
// before its result (the last line of a tool's log) would otherwise
// reach the caller's client after the result, when the request it
// belongs to has ended. A call waits ([heard.wait]) for every such
// notification read before its result.
type heard struct {
	mu      sync.Mutex
	read    uint64
	handled uint64
	changed chan struct{} // closed, and replaced, when handled grows
}

// noted reports whether msg is a notification whose handling a call's
// result waits for.
func noted(msg jsonrpc.Message) bool {
	r, ok := msg.(*jsonrpc.Request)
	return ok && !r.IsCall() && (r.Method == "notifications/message" || r.Method == "notifications/progress")
}

// readOne counts a notification read off the connection.
func (h *heard) readOne() {
	h.mu.Lock()
	h.read++
	h.mu.Unlock()
}

// handledOne counts a notification whose handler has finished.
func (h *heard) handledOne() {
	h.mu.Lock()
	h.handled++
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	h.mu.Unlock()
}

// wait returns once every notification read so far has been handled, or
// when ctx or the session (done) ends, or after [heardWait]; then it
// counts as handled whatever was not, so one lost notification delays
// one call only.
func (h *heard) wait(ctx context.Context, done <-chan struct{}) {
	h.mu.Lock()
	target := h.read
	if h.handled >= target {
		h.mu.Unlock()
		return
	}
	timer := time.NewTimer(heardWait)
	defer timer.Stop()
	for h.handled < target {
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		ch := h.changed
		h.mu.Unlock()
		over := true
		select {
		case <-ch:
			over = false
		case <-ctx.Done():
		case <-done:
		case <-timer.C:
		}
		h.mu.Lock()
		if over {
			break
		}
	}
	if h.handled < target {
		h.handled = target
	}
	h.mu.Unlock()
}

// hearing returns t counting what its connections read into h. The
// streamable HTTP client's connection is left as it is: the SDK tells its
// session state to that connection through a method a wrapper cannot
// pass on, so over streamable HTTP a log line sent just before a result
// may still come after it.
//
// With ids (an observer is set) the connections also write down each
// request's JSON-RPC id ([idConn]); over streamable HTTP the POST's
// RoundTripper does ([traceTransport]).
func hearing(t mcp.Transport, h *heard, ids bool) mcp.Transport {
	if _, ok := t.(*mcp.StreamableClientTransport); ok {
		return t
	}
	return hearingTransport{t, h, ids}
}

// hearingTransport is a transport whose connections count what they read
// ([heard]) and, with ids, write down what they send ([idConn]).
type hearingTransport struct {
	mcp.Transport
	h   *heard
	ids bool
}

// Connect implements [mcp.Transport].
func (t hearingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	hc := &hearingConn{Connection: c, h: t.h}
	if t.ids {
		return idConn{hc}, nil
	}
	return hc, nil
}

// hearingConn counts the notifications a connection reads ([heard]).
type hearingConn struct {
	mcp.Connection
	h *heard
}

// Read implements [mcp.Connection].
func (c *hearingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil && noted(msg) {
		c.h.readOne()
	}
	return msg, err
}
