package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The request headers basis reserves to tell its observing middleware
// what the transport knows of a request: the SDK passes a request's
// header on as its [mcp.RequestExtra].Header, and has no field for the
// JSON-RPC id. Only basis sets them: the HTTP handler drops a client's
// copies ([markRequestID]), and over stdio no client header exists.
const (
	// headerRequestID is the request's JSON-RPC id in its string form.
	headerRequestID = "Basis-Jsonrpc-Request-Id"
	// headerTransport is "pipe" on a request read from a stdio
	// connection basis wraps ([idConn]).
	headerTransport = "Basis-Transport"
)

// maxRequestIDLen bounds the id a span records: the client chooses it,
// and a span attribute is no place for megabytes.
const maxRequestIDLen = 256

// idString is the string form of a JSON-RPC id, as the semantic
// conventions' jsonrpc.request.id has it: a string as it is, a number in
// decimal; "" for none or one too long to record.
func idString(id jsonrpc.ID) string {
	var s string
	switch v := id.Raw().(type) {
	case string:
		s = v
	case int64:
		s = strconv.FormatInt(v, 10)
	}
	if len(s) > maxRequestIDLen {
		return ""
	}
	return s
}

// requestIDOf returns the id basis put in a request's header, or "".
func requestIDOf(h http.Header) string {
	if v := h[headerRequestID]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// markRequestID sets, for the observing middleware, the reserved header
// of an HTTP request to the id of the call its body carries (body nil:
// no message), after removing every copy the client sent, in any
// spelling: what the middleware reads is basis's alone. The body is
// decoded as the SDK decodes it, so the id is the one the SDK answers to
// (a key given twice, a number with a fraction). A batch, a notification
// or a response carries no id here.
func markRequestID(r *http.Request, body []byte) {
	for k := range r.Header {
		if strings.EqualFold(k, headerRequestID) || strings.EqualFold(k, headerTransport) {
			delete(r.Header, k)
		}
	}
	if len(body) == 0 {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if id := idString(req.ID); id != "" {
			r.Header[headerRequestID] = []string{id}
		}
	}
}

// observedTransport returns the transport a server with an observer
// serves over instead of t: for the SDK's stdio and io transports, the
// same transport whose connection marks each request it reads with its
// id ([idConn]); any other transport as it is (its requests' spans have
// no jsonrpc.request.id).
//
// The SDK tells its io connection the protocol the session negotiated
// through an unexported method a wrapper cannot pass on; the connection
// uses it only to refuse JSON-RPC batches from protocol 2025-06-18 on.
// The wrapper refuses them itself ([batchGuard]), so serving with an
// observer accepts no message that serving without one refuses.
func (s *Server) observedTransport(t mcp.Transport) mcp.Transport {
	if s.opts.Observer == nil {
		return t
	}
	var g *batchGuard
	var inner mcp.Transport
	switch tt := t.(type) {
	case *mcp.StdioTransport:
		// What the SDK's stdio transport connects to: stdin (closed
		// with the connection) and stdout (left open).
		g = &batchGuard{r: os.Stdin}
		inner = &mcp.IOTransport{Reader: g, Writer: nopWriteCloser{os.Stdout}, MaxLineLength: tt.MaxLineLength}
	case *mcp.IOTransport:
		g = &batchGuard{r: tt.Reader}
		cp := *tt
		cp.Reader = g
		inner = &cp
	default:
		return t
	}
	return &idTransport{inner: inner, guard: g}
}

// idTransport connects its inner transport and wraps the connection in
// an [idConn].
type idTransport struct {
	inner mcp.Transport
	guard *batchGuard
}

// Connect implements [mcp.Transport].
func (t *idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &idConn{Connection: c, guard: t.guard}, nil
}

// idConn is a stdio connection that marks each request it reads, for
// the observing middleware: the transport ("pipe") and, on a call, its
// id. The SDK's io connection sets no Extra of its own, so nothing a
// client sends reaches these headers. It also reads the protocol the
// session negotiated off the initialize result it writes, for its
// [batchGuard].
type idConn struct {
	mcp.Connection
	guard *batchGuard

	mu     sync.Mutex
	initID jsonrpc.ID // the id of the initialize request being answered
}

// Read implements [mcp.Connection].
func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		h := http.Header{headerTransport: {"pipe"}}
		if req.IsCall() {
			if id := idString(req.ID); id != "" {
				h[headerRequestID] = []string{id}
			}
			if req.Method == "initialize" {
				c.mu.Lock()
				c.initID = req.ID
				c.mu.Unlock()
			}
		}
		req.Extra = &mcp.RequestExtra{Header: h}
	}
	return msg, err
}

// Write implements [mcp.Connection].
func (c *idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && resp.ID.IsValid() {
		c.mu.Lock()
		initialize := resp.ID == c.initID
		if initialize {
			c.initID = jsonrpc.ID{} // a later call may reuse the id
		}
		c.mu.Unlock()
		if initialize {
			// Before the result is written, as the SDK tells its
			// connection before it answers.
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(resp.Result, &res) == nil && res.ProtocolVersion != "" {
				c.guard.refuse.Store(res.ProtocolVersion >= "2025-06-18")
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// errBatch is what reading a JSON-RPC batch ends a stdio connection
// with once the session's protocol has none, as the SDK's own
// connection does.
var errBatch = errors.New("mcpserve: a JSON-RPC batch: batching is not supported in protocol 2025-06-18 and later")

// batchGuard is the reader under a wrapped stdio connection: it follows
// the JSON structure of what it reads and, once refuse is set, fails at
// the first top-level array (a batch). Malformed JSON may mislead it,
// but the connection's decoder fails on that anyway.
type batchGuard struct {
	r      io.ReadCloser
	refuse atomic.Bool

	err              error // sticky, once a batch was refused
	depth            int
	inString, escape bool
}

// Read implements [io.Reader]. The bytes before a refused batch are
// returned with the error, so the messages they hold are served.
func (g *batchGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i, c := range p[:n] {
		if g.batchStarts(c) && g.refuse.Load() {
			g.err = errBatch
			return i, g.err
		}
	}
	return n, err
}

// batchStarts advances the scan over c and reports whether c opens a
// top-level array.
func (g *batchGuard) batchStarts(c byte) bool {
	switch {
	case g.inString:
		switch {
		case g.escape:
			g.escape = false
		case c == '\\':
			g.escape = true
		case c == '"':
			g.inString = false
		}
	case c == '"':
		g.inString = true
	case c == '{' || c == '[':
		g.depth++
		return c == '[' && g.depth == 1
	case c == '}' || c == ']':
		if g.depth > 0 {
			g.depth--
		}
	}
	return false
}

// Close implements [io.Closer].
func (g *batchGuard) Close() error { return g.r.Close() }
