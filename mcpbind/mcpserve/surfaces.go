package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Surfaces is what a [Server] serves besides tools: resources, resource
// templates, prompts and completions ([ServerOptions.Surfaces]).
// Implementations must be safe for concurrent use. Every error's text is
// sent to the client as it is, so it must never carry a secret; a
// *jsonrpc.Error keeps its code.
type Surfaces interface {
	// Resources, ResourceTemplates and Prompts return what is served
	// now, whole (the server sends one page).
	Resources(ctx context.Context) ([]*mcp.Resource, error)
	ResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error)
	Prompts(ctx context.Context) ([]*mcp.Prompt, error)
	// ReadResource and GetPrompt are calls: the implementation gates and
	// audits them. id is the request's call id, as [Roster.Call] gets
	// one.
	ReadResource(ctx context.Context, id, uri string) (*mcp.ReadResourceResult, error)
	GetPrompt(ctx context.Context, id, name string, args map[string]string) (*mcp.GetPromptResult, error)
	// Complete answers completion/complete.
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
	// Subscribe and Unsubscribe answer resources/subscribe and
	// resources/unsubscribe.
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
}

// surfaceOptions declares the capabilities and sets the handlers of
// [ServerOptions.Surfaces] on the SDK server's options.
func (s *Server) surfaceOptions(o *mcp.ServerOptions) {
	sf := s.opts.Surfaces
	if sf == nil {
		return
	}
	o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
	o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	o.Capabilities.Completions = &mcp.CompletionCapabilities{}
	o.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		res, err := sf.Complete(ctx, req.Params)
		return res, wireError(err)
	}
	o.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error {
		return wireError(sf.Subscribe(ctx, req.Params.URI))
	}
	o.UnsubscribeHandler = func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
		return wireError(sf.Unsubscribe(ctx, req.Params.URI))
	}
}

// surfaceMethods answers the list, read and get methods of
// [ServerOptions.Surfaces] before the SDK's own handlers, which know only
// what was added to the SDK server.
func (s *Server) surfaceMethods(next mcp.MethodHandler) mcp.MethodHandler {
	sf := s.opts.Surfaces
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		// A question during a read or get (basis's approval, a
		// server's own) goes to this request's client.
		dctx := context.WithValue(ctx, directKey{}, &direct{ctx: ctx, session: ss})
		switch method {
		case "resources/list":
			rs, err := sf.Resources(ctx)
			if rs == nil {
				rs = []*mcp.Resource{}
			}
			return &mcp.ListResourcesResult{Resources: rs, Cacheable: listCache}, listError(rs, err)
		case "resources/templates/list":
			ts, err := sf.ResourceTemplates(ctx)
			if ts == nil {
				ts = []*mcp.ResourceTemplate{}
			}
			return &mcp.ListResourceTemplatesResult{ResourceTemplates: ts, Cacheable: listCache}, listError(ts, err)
		case "prompts/list":
			ps, err := sf.Prompts(ctx)
			if ps == nil {
				ps = []*mcp.Prompt{}
			}
			return &mcp.ListPromptsResult{Prompts: ps, Cacheable: listCache}, listError(ps, err)
		case "resources/read":
			r, ok := req.(*mcp.ReadResourceRequest)
			if !ok || r.Params == nil {
				break
			}
			pctx, err := s.surfacePass(dctx, ss, surfaceClient(r), method, map[string]any{"uri": r.Params.URI}, r.Params.Meta, r.Params.InputResponses, r.Params.RequestState)
			if err != nil {
				return nil, err
			}
			res, err := sf.ReadResource(pctx, s.callID(), r.Params.URI)
			if err != nil {
				return nil, wireError(err)
			}
			if res.InputRequests != nil && newProtocol(ss) {
				res.RequestState = s.continueLater(surfaceClient(r), method, map[string]any{"uri": r.Params.URI}, res.InputRequests, res.RequestState)
				return inputRequired(res), nil
			}
			return completed(ss, res), nil
		case "prompts/get":
			r, ok := req.(*mcp.GetPromptRequest)
			if !ok || r.Params == nil {
				break
			}
			target := map[string]any{"name": r.Params.Name, "arguments": r.Params.Arguments}
			pctx, err := s.surfacePass(dctx, ss, surfaceClient(r), method, target, r.Params.Meta, r.Params.InputResponses, r.Params.RequestState)
			if err != nil {
				return nil, err
			}
			res, err := sf.GetPrompt(pctx, s.callID(), r.Params.Name, r.Params.Arguments)
			if err != nil {
				return nil, wireError(err)
			}
			if res.InputRequests != nil && newProtocol(ss) {
				res.RequestState = s.continueLater(surfaceClient(r), method, target, res.InputRequests, res.RequestState)
				return inputRequired(res), nil
			}
			return completed(ss, res), nil
		}
		return next(ctx, method, req)
	}
}

// listError keeps a list that is partly there: the servers that answered
// are listed, and the failure goes to the log rather than the client.
func listError[T any](items []T, err error) error {
	if err == nil || len(items) > 0 {
		return nil
	}
	return wireError(err)
}

// callID is a new call id, as [Roster.Call] gets.
func (s *Server) callID() string {
	return "mcp-" + s.runID + "-" + strconv.FormatUint(s.seq.Add(1), 10)
}

// wireError is err as the client gets it: a *jsonrpc.Error as it is, any
// other error as an internal error with its text.
func wireError(err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return &jsonrpc.Error{Code: wire.Code, Message: err.Error(), Data: wire.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// GatewaySurfaces is the [Surfaces] of a basis runtime's MCP servers:
// their resources, templates, prompts and completions, aggregated as
// mcpbind.Manager serves them (ADR 0016), every read and prompt get run
// through the runtime's pipeline (runtime.Runtime.CallUnlisted): gated
// with subject {server, method, uri or name, arguments}, audited.
type GatewaySurfaces struct {
	// Manager returns the MCP client served now (nil: none); Runtime the
	// runtime whose gate and audit judge reads and gets.
	Manager func() *mcpbind.Manager
	Runtime func() *runtime.Runtime
	// Depth is the delegation depth the calls run at, as
	// [RuntimeRoster.Depth].
	Depth int
}

var errNoServers = errors.New("basis serves no MCP server's resources or prompts here (no MCP server is connected)")

func (g *GatewaySurfaces) manager() (*mcpbind.Manager, error) {
	if g.Manager == nil {
		return nil, errNoServers
	}
	if m := g.Manager(); m != nil {
		return m, nil
	}
	return nil, errNoServers
}

// Resources lists every connected server's resources.
func (g *GatewaySurfaces) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	m, err := g.manager()
	if err != nil {
		return nil, nil
	}
	return m.Resources(ctx)
}

// ResourceTemplates lists every connected server's resource templates.
func (g *GatewaySurfaces) ResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	m, err := g.manager()
	if err != nil {
		return nil, nil
	}
	return m.ResourceTemplates(ctx)
}

// Prompts lists every connected server's prompts.
func (g *GatewaySurfaces) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	m, err := g.manager()
	if err != nil {
		return nil, nil
	}
	return m.Prompts(ctx)
}

// ReadResource reads uri from the server that owns it, once the gate
// allows it.
func (g *GatewaySurfaces) ReadResource(ctx context.Context, id, uri string) (*mcp.ReadResourceResult, error) {
	m, err := g.manager()
	if err != nil {
		return nil, err
	}
	sf, err := m.ReadResource(ctx, uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error(), Data: uriData(uri)}
	}
	if err := g.run(ctx, id, sf); err != nil {
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams {
			// The resource is not there: say which, as SEP-2164 asks,
			// in the client's own URI rather than the server's.
			wire.Data = uriData(uri)
		}
		return nil, err
	}
	if asks, state := sf.InputRequired(); asks != nil {
		out, err := surfaceAsks(sf.Server(), asks)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{InputRequests: out, RequestState: state}, nil
	}
	return sf.ReadResult(), nil
}

// GetPrompt gets the prompt from the server that owns it, once the gate
// allows it.
func (g *GatewaySurfaces) GetPrompt(ctx context.Context, id, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	m, err := g.manager()
	if err != nil {
		return nil, err
	}
	sf, err := m.GetPrompt(ctx, name, args)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if err := g.run(ctx, id, sf); err != nil {
		return nil, err
	}
	if asks, state := sf.InputRequired(); asks != nil {
		out, err := surfaceAsks(sf.Server(), asks)
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{InputRequests: out, RequestState: state}, nil
	}
	return sf.PromptResult(), nil
}

// run runs one read or get through the runtime's pipeline. A refusal or
// a failure is an error with the runtime's text (which never quotes a
// secret); a server's own protocol error keeps its code.
func (g *GatewaySurfaces) run(ctx context.Context, id string, sf *mcpbind.Surface) error {
	rt := g.Runtime()
	out := rt.CallUnlisted(contract.WithDelegationDepth(ctx, g.Depth), sf, contract.Call{ID: id, Input: sf.Input()})
	if out.Status == runtime.StatusOK {
		return nil
	}
	code := int64(jsonrpc.CodeInternalError)
	var wire *jsonrpc.Error
	if out.Status == runtime.StatusToolError && errors.As(out.Err, &wire) {
		code = wire.Code
	}
	return &jsonrpc.Error{Code: code, Message: out.Text}
}

// uriData is the data of an error about the resource uri: {"uri": uri}.
func uriData(uri string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"uri": uri})
	return b
}

// Complete asks the server that owns the prompt or template.
func (g *GatewaySurfaces) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	m, err := g.manager()
	if err != nil {
		return nil, err
	}
	return m.Complete(ctx, p)
}

// Subscribe routes a subscription to the server that owns uri.
func (g *GatewaySurfaces) Subscribe(ctx context.Context, uri string) error {
	m, err := g.manager()
	if err != nil {
		return err
	}
	return m.Subscribe(ctx, uri)
}

// Unsubscribe routes an unsubscription to the server that owns uri.
func (g *GatewaySurfaces) Unsubscribe(ctx context.Context, uri string) error {
	m, err := g.manager()
	if err != nil {
		return err
	}
	return m.Unsubscribe(ctx, uri)
}

// listChangedName names the prompt and resource the server adds and
// removes at once to have the SDK announce a list changed: the lists
// themselves are answered from [Surfaces], so neither is ever served.
const listChangedName = "basis-mcp://list-changed"

// Notify tells clients what changed in the [Surfaces]: method is
// notifications/prompts/list_changed or
// notifications/resources/list_changed (uri unused), or
// notifications/resources/updated, sent to the clients subscribed to
// uri. It does nothing on a server without Surfaces.
func (s *Server) Notify(method, uri string) {
	if s.opts.Surfaces == nil {
		return
	}
	switch method {
	case "notifications/prompts/list_changed":
		s.mcp.AddPrompt(&mcp.Prompt{Name: listChangedName}, nil)
		s.mcp.RemovePrompts(listChangedName)
	case "notifications/resources/list_changed":
		s.mcp.AddResource(&mcp.Resource{URI: listChangedName, Name: listChangedName}, nil)
		s.mcp.RemoveResources(listChangedName)
	case "notifications/resources/updated":
		_ = s.mcp.ResourceUpdated(s.base, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}
