//go:build unix

package mcpbind

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestObserver is told of each request a [Manager] sends: it returns
// the context the request is sent under, whose [contract.TraceContext]
// goes in params._meta, and a function called once with its error.
// The request's RequestID gives its JSON-RPC id once the request is
// written ("" if it never was). The otelbasis module's Observer is one.
type RequestObserver interface {
	StartMCPRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(error))
}

// observing tells the manager's observer of every request c sends.
func (s *server) observing(c *mcp.Client) {
	obs := s.m.opts.Observer
	if obs == nil {
		return
	}
	transport := "tcp"
	if s.cfg.Type == TypeStdio || s.cfg.Type == "" {
		transport = "pipe"
	}
	c.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			// The SDK numbers the request as it writes it, after this
			// middleware: the transport writes the number down in rid.
			rid := &requestID{}
			r := contract.MCPRequest{Method: method, Target: targetOf(req), Server: s.cfg.Name, Transport: transport, RequestID: rid.get}
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
				r.SessionID = cs.ID()
				if ir := cs.InitializeResult(); ir != nil {
					r.ProtocolVersion = ir.ProtocolVersion
				}
			}
			ctx, end := obs.StartMCPRequest(ctx, r)
			ctx = context.WithValue(ctx, requestIDKey{}, rid)
			if tc, ok := contract.TraceContextOf(ctx); ok {
				if p := req.GetParams(); p != nil {
					meta := maps.Clone(p.GetMeta())
					if meta == nil {
						meta = map[string]any{}
					}
					meta["traceparent"] = tc.Parent
					delete(meta, "tracestate")
					if tc.State != "" {
						meta["tracestate"] = tc.State
					}
					p.SetMeta(meta)
				}
			}
			res, err := next(ctx, method, req)
			if end != nil {
				end(err)
			}
			return res, err
		}
	})
}

// targetOf is what a request names: a tool, a prompt, a resource.
func targetOf(req mcp.Request) string {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		if p != nil {
			return p.Name
		}
	case *mcp.GetPromptParams:
		if p != nil {
			return p.Name
		}
	case *mcp.ReadResourceParams:
		if p != nil {
			return p.URI
		}
	}
	return ""
}

// requestIDKey is the context key of a request's [requestID].
type requestIDKey struct{}

// requestID is where a request's transport writes down the JSON-RPC id
// the SDK gave it: a stdio (or SSE) connection's Write ([idConn]), or the
// HTTP POST that carries it ([traceTransport]). The first id written
// stays: a request re-sent under the same middleware call (the SDK's
// multi-round-trip retries) is known by the id it was first sent with.
type requestID struct {
	mu sync.Mutex
	id string
}

// requestIDOf returns the request's recorder in ctx, or nil when nobody
// observes the request.
func requestIDOf(ctx context.Context) *requestID {
	r, _ := ctx.Value(requestIDKey{}).(*requestID)
	return r
}

func (r *requestID) set(id string) {
	r.mu.Lock()
	if r.id == "" {
		r.id = id
	}
	r.mu.Unlock()
}

func (r *requestID) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// idString is the string form of a JSON-RPC id, as the semantic
// conventions' jsonrpc.request.id has it: a string as it is, a number in
// decimal; "" for none.
func idString(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// idConn is a connection that writes down the id of each request it
// writes in the request's [requestID]. The SDK asks nothing of a client's
// stdio (or SSE) connection beyond [mcp.Connection], so wrapping it
// loses nothing.
type idConn struct {
	*hearingConn
}

// Write implements [mcp.Connection].
func (c idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
		if rid := requestIDOf(ctx); rid != nil {
			rid.set(idString(r.ID))
		}
	}
	return c.hearingConn.Write(ctx, msg)
}

// bodyID returns the top-level "id" of a JSON-RPC message, in its string
// form, reading no further than it: the SDK writes the id before the
// params, so a large request is not read through.
func bodyID(r io.Reader) string {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "" // not one message (a batch, or not JSON)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return ""
		}
		if k != "id" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
			continue
		}
		switch v, _ := dec.Token(); v := v.(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return ""
	}
	return ""
}

// postID writes down the id of the request an HTTP POST carries when its
// context has a [requestID] still without one; the body the server
// receives is unchanged. It returns the request to send.
func postID(req *http.Request) *http.Request {
	rid := requestIDOf(req.Context())
	if rid == nil || req.Method != http.MethodPost || req.Body == nil || rid.get() != "" {
		return req
	}
	if req.GetBody != nil {
		// A fresh reader of the same bytes: req.Body stays unread.
		if body, err := req.GetBody(); err == nil {
			rid.set(bodyID(body))
			body.Close()
		}
		return req
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data), errReader{err}))
	if err == nil {
		rid.set(bodyID(bytes.NewReader(data)))
	}
	return req
}

// errReader returns err, or io.EOF for none: the end of a body read
// again, with the error its first reading ended in.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

// traceTransport sends the trace context of a request's context as the
// W3C traceparent and tracestate headers, the same the request carries
// in params._meta, so an HTTP server's own tracing (a proxy's too) joins
// the trace. contract has validated the values. For an observed request
// it writes down the JSON-RPC id the POST carries ([postID]), when ids
// (the manager has an observer).
type traceTransport struct {
	base http.RoundTripper
	ids  bool
}

// RoundTrip implements [http.RoundTripper].
func (t traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.ids {
		req = postID(req)
	}
	tc, ok := contract.TraceContextOf(req.Context())
	if !ok {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Traceparent", tc.Parent)
	req.Header.Del("Tracestate")
	if tc.State != "" {
		req.Header.Set("Tracestate", tc.State)
	}
	return t.base.RoundTrip(req)
}
