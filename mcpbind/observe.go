//go:build unix

package mcpbind

import (
	"context"
	"maps"
	"net/http"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestObserver is told of each request a [Manager] sends: it returns
// the context the request is sent under, whose [contract.TraceContext]
// goes in params._meta, and a function called once with its error.
// The otelbasis module's Observer is one.
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
			r := contract.MCPRequest{Method: method, Target: targetOf(req), Server: s.cfg.Name, Transport: transport}
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
				r.SessionID = cs.ID()
				if ir := cs.InitializeResult(); ir != nil {
					r.ProtocolVersion = ir.ProtocolVersion
				}
			}
			ctx, end := obs.StartMCPRequest(ctx, r)
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

// traceTransport sends the trace context of a request's context as the
// W3C traceparent and tracestate headers, the same the request carries
// in params._meta, so an HTTP server's own tracing (a proxy's too) joins
// the trace. contract has validated the values.
type traceTransport struct {
	base http.RoundTripper
}

// RoundTrip implements [http.RoundTripper].
func (t traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
