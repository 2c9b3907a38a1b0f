//go:build unix

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28, but servers may use it during the deprecation window, and a gateway forwards what they ask (issue 22)

package mcpbind

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerRequestFunc answers a server's elicitation (*mcp.ElicitParams)
// or sampling (*mcp.CreateMessageWithToolsParams) during a call of its
// tool, under the call's context (so mcpserve.Forward reaches the client
// that made it); an error declines.
type ServerRequestFunc func(ctx context.Context, server string, req mcp.InputRequest) (mcp.InputResponse, error)

// inflight is the calls a server has in flight, so a request it makes
// reaches the call it is part of.
type inflight struct {
	mu    sync.Mutex
	calls map[*callMark]context.Context
}

// callMark tells calls apart. It is not zero-sized: pointers to distinct
// zero-sized values may be equal.
type callMark struct{ _ byte }

type callKey struct{}

// enter records a call in flight until leave is called. The returned
// context carries the call, for requests the SDK answers inside it (the
// input requests of a server on protocol 2026-07-28).
func (in *inflight) enter(ctx context.Context) (context.Context, func()) {
	mark := &callMark{}
	in.mu.Lock()
	if in.calls == nil {
		in.calls = map[*callMark]context.Context{}
	}
	in.calls[mark] = ctx
	in.mu.Unlock()
	return context.WithValue(ctx, callKey{}, ctx), func() {
		in.mu.Lock()
		delete(in.calls, mark)
		in.mu.Unlock()
	}
}

// errWhichCall: a server asked something while none, or more than one,
// of its calls was in flight, so nobody can be told to answer.
var errWhichCall = errors.New("the server asked while no single call of it was in flight, so there is no one user to ask")

// callFor finds the call a server's request belongs to: the one whose
// context the SDK handed on, else the only call in flight. With several
// calls in flight (over stdio a request does not say which call it is
// part of) it finds none: a question must never reach the user of
// another client's call.
func (in *inflight) callFor(ctx context.Context) (context.Context, error) {
	if c, ok := ctx.Value(callKey{}).(context.Context); ok {
		return c, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.calls) != 1 {
		return nil, errWhichCall
	}
	for _, c := range in.calls {
		return c, nil
	}
	return nil, errWhichCall
}

// forwardingProtocol is the protocol basis offers a server when it
// forwards the server's questions: the newest on which a server may ask
// during a call by a request of its own (elicitation/create,
// sampling/createMessage). 2026-07-28 forbids that; a server written for
// it asks through input requests, which its SDK turns into those requests
// on this version, so both kinds of server reach the user.
const forwardingProtocol = "2025-11-25"

// newestOnly reports whether a handshake on forwardingProtocol failed
// because the server knows no initialize: it speaks 2026-07-28 alone.
func newestOnly(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

// sessionOptions are the options of a session with the server: the
// protocol of forwarding when the host takes the server's questions, the
// newest otherwise.
func (s *server) sessionOptions() *mcp.ClientSessionOptions {
	if s.m.opts.ServerRequest == nil {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: forwardingProtocol}
}

// forwardingMiddleware lets through the titled multi-select of SEP-1330
// as servers write it: items {"type": "string", "anyOf": [...]}, which
// the SDK's check of a form refuses (it wants "type" only without
// "anyOf"), on this side and again when basis serve asks its own client.
// Each const of "anyOf" is a string, so the form asks the same without
// "type".
func (s *server) forwardingMiddleware(c *mcp.Client) {
	if s.m.opts.ServerRequest == nil {
		return
	}
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok && r.Params != nil {
				p := *r.Params
				p.RequestedSchema = titledMultiSelect(p.RequestedSchema)
				r2 := *r
				r2.Params = &p
				req = &r2
			}
			return next(ctx, method, req)
		}
	})
}

// titledMultiSelect returns schema with "type" left out of every array
// property's items that list their choices in "anyOf"; anything else is
// as it was.
func titledMultiSelect(schema any) any {
	top, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	props, ok := top["properties"].(map[string]any)
	if !ok {
		return schema
	}
	newProps := make(map[string]any, len(props))
	changed := false
	for name, v := range props {
		newProps[name] = v
		prop, ok := v.(map[string]any)
		if !ok {
			continue
		}
		items, ok := prop["items"].(map[string]any)
		if !ok || items["anyOf"] == nil || items["type"] == nil {
			continue
		}
		it := make(map[string]any, len(items))
		for k, x := range items {
			if k != "type" {
				it[k] = x
			}
		}
		np := make(map[string]any, len(prop))
		for k, x := range prop {
			np[k] = x
		}
		np["items"] = it
		newProps[name] = np
		changed = true
	}
	if !changed {
		return schema
	}
	out := make(map[string]any, len(top))
	for k, x := range top {
		out[k] = x
	}
	out["properties"] = newProps
	return out
}

// forwarding sets the handlers that pass a server's elicitation and
// sampling requests to the host, when the host takes them; otherwise
// basis declares neither capability and servers do not ask.
func (s *server) forwarding(opts *mcp.ClientOptions) {
	ask := s.m.opts.ServerRequest
	if ask == nil {
		return
	}
	opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	opts.Capabilities.Sampling = &mcp.SamplingCapabilities{}
	opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		decline := &mcp.ElicitResult{Action: "decline"}
		call, err := s.inflight.callFor(ctx)
		if err != nil || req.Params == nil {
			return decline, nil
		}
		res, err := ask(call, s.cfg.Name, req.Params)
		if r, ok := res.(*mcp.ElicitResult); ok && err == nil && r != nil {
			return r, nil
		}
		return decline, nil
	}
	opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		call, err := s.inflight.callFor(ctx)
		if err != nil || req.Params == nil {
			return nil, errors.New("basis declined the sampling request: " + errWhichCall.Error())
		}
		res, err := ask(call, s.cfg.Name, req.Params)
		if r, ok := res.(*mcp.CreateMessageWithToolsResult); ok && err == nil && r != nil {
			return r, nil
		}
		// Sampling has no decline of its own: an error is how a client
		// refuses. Only basis's own words go back to the server.
		return nil, errors.New("basis declined the sampling request: the user of the MCP client that made the call cannot answer it, or did not")
	}
}
