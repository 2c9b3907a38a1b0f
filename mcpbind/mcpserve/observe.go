package mcpserve

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestObserver is told of each request a [Server] answers:
// [ServerOptions.Observer]. StartServedRequest gets the request's context,
// which carries the trace the client sent in params._meta (traceparent,
// tracestate) as a [contract.TraceContext], and returns the context the
// request is answered under and a function called, once, when it is
// answered, with its error type: "" for success, "tool_error" for a tool
// result that is an error (a failure or a refusal), the JSON-RPC error
// code ("-32602") for a protocol error, "_OTHER" for any other error.
// When the returned context carries a [contract.TraceContext], a call the
// request starts runs under it, so its spans are the request's children.
// req.Server is empty. req.RequestID, when set, gives the JSON-RPC id
// the client sent a call under: over streamable HTTP, and over stdio when
// the server serves the SDK's stdio or io transport
// ([Server.Serve] wraps it). The otelbasis module's Observer is one.
type RequestObserver interface {
	StartServedRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(errorType string))
}

// servedTraceKey is the context key of the trace context a served
// request's call continues: the observer's span, or the client's.
type servedTraceKey struct{}

// observing tells the server's observer of every request it answers; it
// is the outermost middleware, so it sees every answer, basis's own
// refusals too.
func (s *Server) observing(next mcp.MethodHandler) mcp.MethodHandler {
	obs := s.opts.Observer
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		r := contract.MCPRequest{Method: method, Transport: "pipe"}
		// A request read off stdio carries the headers basis's own
		// connection gave it ([idConn]); one over HTTP, the request's,
		// where only basis's handler set the reserved ones.
		if x := req.GetExtra(); x != nil && x.Header != nil {
			if x.Header.Get(headerTransport) != "pipe" {
				r.Transport = "tcp"
			}
			if id := requestIDOf(x.Header); id != "" {
				r.RequestID = func() string { return id }
			}
		}
		params := req.GetParams()
		if params != nil && reflect.ValueOf(params).IsNil() {
			params = nil
		}
		switch p := params.(type) {
		case *mcp.CallToolParamsRaw:
			r.Target = p.Name
		case *mcp.CallToolParams:
			r.Target = p.Name
		case *mcp.GetPromptParams:
			r.Target = p.Name
		case *mcp.ReadResourceParams:
			r.Target = p.URI
		case *mcp.InitializeParams:
			r.ProtocolVersion = p.ProtocolVersion
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			r.SessionID = ss.ID()
			if ip := ss.InitializeParams(); ip != nil && r.ProtocolVersion == "" {
				r.ProtocolVersion = ip.ProtocolVersion
			}
		}
		if params != nil {
			ctx = withClientTrace(ctx, params.GetMeta())
		}
		ctx, end := obs.StartServedRequest(ctx, r)
		if tc, ok := contract.TraceContextOf(ctx); ok {
			ctx = context.WithValue(ctx, servedTraceKey{}, tc)
		}
		res, err := next(ctx, method, req)
		if end != nil {
			end(servedErrorType(res, err))
		}
		return res, err
	}
}

// servedErrorType is an answer's error.type in the MCP conventions: the
// JSON-RPC code of a protocol error, "tool_error" for a tool result that
// is an error. Never a message, which may quote anything.
func servedErrorType(res mcp.Result, err error) string {
	if err != nil {
		if werr, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return strconv.FormatInt(werr.Code, 10)
		}
		return "_OTHER"
	}
	if tr, ok := res.(typedResult); ok {
		res = tr.Result
	}
	if ctr, ok := res.(*mcp.CallToolResult); ok && ctr != nil && ctr.IsError {
		return "tool_error"
	}
	return ""
}

// callTrace is the trace context the call of a request in reqCtx
// continues: the one the observer put there, or else the client's from
// meta.
func callTrace(ctx, reqCtx context.Context, meta map[string]any) context.Context {
	if tc, ok := reqCtx.Value(servedTraceKey{}).(contract.TraceContext); ok {
		return contract.WithTraceContext(ctx, tc)
	}
	return withClientTrace(ctx, meta)
}
