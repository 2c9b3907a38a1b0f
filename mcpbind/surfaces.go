//go:build unix

package mcpbind

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// qualifiedScheme begins the URI that names one server's resource
// whatever the other servers list: "basis-mcp://<server>/<uri>", where
// <server> is the server's name as tool names spell it and <uri> the
// server's own URI, as it is. A URI only one server lists is served as
// it is; one that several list is served qualified (ADR 0016).
const qualifiedScheme = "basis-mcp://"

// qualifiedURI returns the URI that names uri of server whatever other
// servers list.
func qualifiedURI(server, uri string) string {
	return qualifiedScheme + sanitize(server) + "/" + uri
}

// surfaceName is the name a server's resource reads and prompt gets go by
// for the gate and the audit: "mcp__<server>", which no tool of a server
// is named (a tool's name goes on with "__"), so rules allow or deny them
// per server ([Surface]).
func surfaceName(server string) string { return contract.MCPPrefix + sanitize(server) }

// Methods a [Surface] makes, spelt as MCP spells them; its preview's
// subject says which.
const (
	methodReadResource = "resources/read"
	methodGetPrompt    = "prompts/get"
)

// live returns the servers that are connected now, in name order, with
// their sessions.
func (m *Manager) live() []*liveServer {
	var out []*liveServer
	for _, n := range m.names {
		s := m.servers[n]
		s.mu.Lock()
		c := s.conn
		ok := s.state == StateConnected && c != nil && !c.ended()
		s.mu.Unlock()
		if ok {
			out = append(out, &liveServer{srv: s, conn: c})
		}
	}
	return out
}

type liveServer struct {
	srv  *server
	conn *conn
}

func (l *liveServer) caps() *mcp.ServerCapabilities {
	if r := l.conn.session.InitializeResult(); r != nil && r.Capabilities != nil {
		return r.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// listAll reads every page of a list, within the bounds tools/list keeps.
func listAll[T any](ctx context.Context, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var out []T
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(out) > maxTools {
			return nil, listBound("it lists more than " + strconv.Itoa(maxTools) + " items")
		}
		if next == "" {
			return out, nil
		}
		if seen[next] || n == maxToolPages {
			return nil, listBound("it sent the same cursor twice, or more than " + strconv.Itoa(maxToolPages) + " pages")
		}
		seen[next], cursor = true, next
	}
}

func (l *liveServer) resources(ctx context.Context) ([]*mcp.Resource, error) {
	if l.caps().Resources == nil {
		return nil, nil
	}
	return listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := l.conn.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
}

func (l *liveServer) templates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	if l.caps().Resources == nil {
		return nil, nil
	}
	return listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := l.conn.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

func (l *liveServer) prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	if l.caps().Prompts == nil {
		return nil, nil
	}
	return listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := l.conn.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// listError names the server whose list failed, its credentials cut out.
func (l *liveServer) listError(op string, err error) error {
	return &ServerError{Server: l.srv.cfg.Name, Op: op, Err: &problem{kind: errProtocol, cause: err, text: l.conn.launch.redact(err.Error())}}
}

// Resources returns every connected server's resources (see the README).
func (m *Manager) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	type owned struct {
		srv string
		r   *mcp.Resource
	}
	var all []owned
	var errs []error
	count := map[string]int{}
	for _, l := range m.live() {
		rs, err := l.resources(ctx)
		if err != nil {
			errs = append(errs, l.listError("list resources", err))
			continue
		}
		for _, r := range rs {
			if r == nil {
				continue
			}
			all = append(all, owned{l.srv.cfg.Name, r})
			count[r.URI]++
		}
	}
	out := make([]*mcp.Resource, 0, len(all))
	for _, o := range all {
		r := *o.r
		if count[r.URI] > 1 {
			r.URI = qualifiedURI(o.srv, r.URI)
		}
		out = append(out, &r)
	}
	return out, errors.Join(errs...)
}

// ResourceTemplates is [Manager.Resources] for resource templates.
func (m *Manager) ResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	type owned struct {
		srv string
		t   *mcp.ResourceTemplate
	}
	var all []owned
	var errs []error
	count := map[string]int{}
	for _, l := range m.live() {
		ts, err := l.templates(ctx)
		if err != nil {
			errs = append(errs, l.listError("list resource templates", err))
			continue
		}
		for _, t := range ts {
			if t == nil {
				continue
			}
			all = append(all, owned{l.srv.cfg.Name, t})
			count[t.URITemplate]++
		}
	}
	out := make([]*mcp.ResourceTemplate, 0, len(all))
	for _, o := range all {
		t := *o.t
		if count[t.URITemplate] > 1 {
			t.URITemplate = qualifiedURI(o.srv, t.URITemplate)
		}
		out = append(out, &t)
	}
	return out, errors.Join(errs...)
}

// Prompts returns every connected server's prompts, named as its tools.
func (m *Manager) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	var errs []error
	for _, l := range m.live() {
		ps, err := l.prompts(ctx)
		if err != nil {
			errs = append(errs, l.listError("list prompts", err))
			continue
		}
		for _, p := range ps {
			if p == nil {
				continue
			}
			q := *p
			q.Name = l.srv.cfg.exposedName(p.Name)
			out = append(out, &q)
		}
	}
	return out, errors.Join(errs...)
}

// errNoOwner: no connected server (or more than one) owns the URI or name
// a client asked for.
var errNoOwner = errors.New("no MCP server owns it")

// ownerOfURI finds the server a served URI belongs to and the URI as that
// server spells it: the server named by a qualified URI; else the one
// server that lists the URI; else the one server whose template matches
// it; else, when only one connected server has resources at all, that
// one. Anything else is ambiguous or unknown, and an error says how to
// name the server.
func (m *Manager) ownerOfURI(ctx context.Context, uri string) (*liveServer, string, error) {
	live := m.live()
	if rest, ok := strings.CutPrefix(uri, qualifiedScheme); ok {
		name, own, _ := strings.Cut(rest, "/")
		for _, l := range live {
			if sanitize(l.srv.cfg.Name) == name {
				return l, own, nil
			}
		}
		return nil, "", newProblem(errNoOwner, "no connected MCP server is named "+strconv.Quote(name)+" (the server part of a "+qualifiedScheme+" URI)")
	}
	var listing, matching, withResources []*liveServer
	for _, l := range live {
		if l.caps().Resources == nil {
			continue
		}
		withResources = append(withResources, l)
		if rs, err := l.resources(ctx); err == nil && slices.ContainsFunc(rs, func(r *mcp.Resource) bool { return r != nil && r.URI == uri }) {
			listing = append(listing, l)
			continue
		}
		if ts, err := l.templates(ctx); err == nil && slices.ContainsFunc(ts, func(t *mcp.ResourceTemplate) bool { return t != nil && templateMatches(t.URITemplate, uri) }) {
			matching = append(matching, l)
		}
	}
	switch {
	case len(listing) == 1:
		return listing[0], uri, nil
	case len(listing) == 0 && len(matching) == 1:
		return matching[0], uri, nil
	case len(listing) == 0 && len(matching) == 0 && len(withResources) == 1:
		return withResources[0], uri, nil
	}
	candidates := append(listing, matching...)
	if len(candidates) == 0 {
		candidates = withResources
	}
	if len(candidates) == 0 {
		return nil, "", newProblem(errNoOwner, "no connected MCP server offers resources")
	}
	names := make([]string, len(candidates))
	for i, l := range candidates {
		names[i] = qualifiedURI(l.srv.cfg.Name, uri)
	}
	return nil, "", newProblem(errNoOwner, "more than one MCP server may have "+strconv.Quote(uri)+"; name one: "+strings.Join(names, " or "))
}

// ownerOfPrompt finds the server a served prompt name belongs to and the
// prompt's own name.
func (m *Manager) ownerOfPrompt(ctx context.Context, name string) (*liveServer, string, error) {
	for _, l := range m.live() {
		if !l.srv.cfg.customPrefix() && !strings.HasPrefix(name, serverPrefix(l.srv.cfg.Name)) && len(name) < contract.MaxNameLen {
			continue
		}
		ps, err := l.prompts(ctx)
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p != nil && l.srv.cfg.exposedName(p.Name) == name {
				return l, p.Name, nil
			}
		}
	}
	return nil, "", newProblem(errNoOwner, "no connected MCP server has a prompt served as "+strconv.Quote(name))
}

// templateMatches reports whether uri could be an expansion of an RFC
// 6570 template: every literal part in order, each expression standing
// for any text ({var} for text without "/", "?" or "#").
func templateMatches(tmpl, uri string) bool {
	var b strings.Builder
	b.WriteString("^")
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			return false
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:i]))
		expr := tmpl[i+1 : i+j]
		switch {
		case expr == "":
			return false
		case expr[0] == '+' || expr[0] == '#' || expr[0] == '/' || expr[0] == '?' || expr[0] == '&' || expr[0] == ';' || expr[0] == '.':
			b.WriteString(".*")
		default:
			b.WriteString("[^/?#]*")
		}
		tmpl = tmpl[i+j+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(uri)
}

// Complete asks the server owning p's prompt or template for completions.
func (m *Manager) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if p == nil || p.Ref == nil {
		return nil, newProblem(errInvalidValue, "a completion needs a reference (ref/prompt or ref/resource)")
	}
	q := *p
	ref := *p.Ref
	q.Ref = &ref
	var l *liveServer
	var err error
	switch ref.Type {
	case "ref/prompt":
		l, ref.Name, err = m.ownerOfPrompt(ctx, ref.Name)
	case "ref/resource":
		l, ref.URI, err = m.ownerOfTemplate(ctx, ref.URI)
	default:
		return nil, newProblem(errInvalidValue, "unknown completion reference type "+strconv.Quote(ref.Type)+"; want ref/prompt or ref/resource")
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.srv.callTimeout())
	defer cancel()
	res, err := l.conn.session.Complete(ctx, &q)
	if err != nil {
		return nil, l.listError("complete", err)
	}
	return res, nil
}

// ownerOfTemplate finds the server a served resource template belongs to.
func (m *Manager) ownerOfTemplate(ctx context.Context, tmpl string) (*liveServer, string, error) {
	if strings.HasPrefix(tmpl, qualifiedScheme) {
		return m.ownerOfURI(ctx, tmpl)
	}
	var found []*liveServer
	for _, l := range m.live() {
		ts, err := l.templates(ctx)
		if err == nil && slices.ContainsFunc(ts, func(t *mcp.ResourceTemplate) bool { return t != nil && t.URITemplate == tmpl }) {
			found = append(found, l)
		}
	}
	if len(found) == 1 {
		return found[0], tmpl, nil
	}
	// Completions may name a resource as well as a template.
	return m.ownerOfURI(ctx, tmpl)
}

// Subscribe asks the server owning uri to tell
// [ManagerOptions].OnNotification of its changes, across restarts.
func (m *Manager) Subscribe(ctx context.Context, uri string) error {
	l, own, err := m.ownerOfURI(ctx, uri)
	if err != nil {
		return err
	}
	if err := l.conn.subscribe(ctx, own); err != nil {
		return l.listError("subscribe", err)
	}
	m.subs.add(l.srv.cfg.Name, own, uri)
	if mc := l.srv.modernOpen(); mc != nil {
		// The second process calls of 2026-07-28 clients run in.
		if err := mc.subscribe(ctx, own); err != nil {
			m.opts.Logger.Warn("subscribing an MCP server's second session to a resource failed", "server", l.srv.cfg.Name, "uri", own, "error", mc.launch.redact(err.Error()))
		}
	}
	return nil
}

// Unsubscribe undoes [Manager.Subscribe].
func (m *Manager) Unsubscribe(ctx context.Context, uri string) error {
	l, own, err := m.ownerOfURI(ctx, uri)
	if err != nil {
		return err
	}
	if !m.subs.remove(l.srv.cfg.Name, own, uri) {
		return nil
	}
	l.conn.acks.forget(own)
	if mc := l.srv.modernOpen(); mc != nil {
		mc.acks.forget(own)
		_ = mc.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: own})
	}
	if err := l.conn.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: own}); err != nil {
		return l.listError("unsubscribe", err)
	}
	return nil
}

// Surface is a server's resource read or prompt get as a tool nobody
// lists, run and gated through a runtime (CallUnlisted); one request each.
type Surface struct {
	srv    *server
	conn   *conn
	method string
	served string // the URI or prompt name the client used
	input  json.RawMessage
	read   *mcp.ReadResourceResult
	prompt *mcp.GetPromptResult
	// asks and askState are what the server asked instead of answering
	// ([Surface.InputRequired]).
	asks     mcp.InputRequestMap
	askState string
}

var (
	_ contract.ExecutableTool = (*Surface)(nil)
	_ contract.Definer        = (*Surface)(nil)
)

// ReadResource returns the [Surface] that reads the served uri.
func (m *Manager) ReadResource(ctx context.Context, uri string) (*Surface, error) {
	l, own, err := m.ownerOfURI(ctx, uri)
	if err != nil {
		return nil, err
	}
	input, err := contract.CanonicalJSON(map[string]any{"uri": own})
	if err != nil {
		return nil, err
	}
	return &Surface{srv: l.srv, conn: l.conn, method: methodReadResource, served: uri, input: input}, nil
}

// GetPrompt returns the [Surface] that gets the served prompt name.
func (m *Manager) GetPrompt(ctx context.Context, name string, args map[string]string) (*Surface, error) {
	l, own, err := m.ownerOfPrompt(ctx, name)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]string{}
	}
	input, err := contract.CanonicalJSON(map[string]any{"name": own, "arguments": args})
	if err != nil {
		return nil, err
	}
	return &Surface{srv: l.srv, conn: l.conn, method: methodGetPrompt, served: name, input: input}, nil
}

// Server is the name of the server the request goes to.
func (s *Surface) Server() string { return s.srv.cfg.Name }

// Input is {"uri": URI} or {"name": NAME, "arguments": {...}}.
func (s *Surface) Input() json.RawMessage { return slices.Clone(s.input) }

// Descriptor describes the request as a tool nobody lists.
func (s *Surface) Descriptor() contract.Descriptor {
	capability := contract.CapabilityNetwork
	if s.srv.cfg.Type == TypeStdio {
		capability = contract.CapabilityProcessExec
	}
	return contract.Descriptor{
		Name:         surfaceName(s.srv.cfg.Name),
		Description:  s.method + " of MCP server " + s.srv.cfg.Name,
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		Capabilities: []contract.Capability{capability},
		SideEffect:   contract.SideEffectExternal,
		Parallel:     true,
		Timeout:      s.srv.callTimeout(),
		Binding:      contract.BindingMCP,
		Source:       sourceOf(s.srv.cfg),
	}
}

type surfaceInput struct {
	URI       string            `json:"uri,omitempty"`
	Name      string            `json:"name,omitempty"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

func (s *Surface) parse(call contract.Call) (surfaceInput, error) {
	var in surfaceInput
	canon, err := contract.CanonicalInput(call.Input)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(canon, &in); err != nil {
		return in, newProblem(contract.ErrInvalidInput, "the input of "+s.method+" is not {\"uri\"} or {\"name\", \"arguments\"}")
	}
	return in, nil
}

// AuthorizationPreview's Subject names the server, method and request.
func (s *Surface) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	in, err := s.parse(call)
	if err != nil {
		return contract.Preview{}, err
	}
	subject := map[string]any{"server": s.srv.subject, "method": s.method}
	summary := ""
	if s.method == methodReadResource {
		subject["uri"] = in.URI
		summary = "read resource " + strconv.Quote(in.URI)
	} else {
		args := in.Arguments
		if args == nil {
			args = map[string]string{}
		}
		subject["name"], subject["arguments"] = in.Name, args
		summary = "get prompt " + strconv.Quote(in.Name)
	}
	js, err := contract.CanonicalJSON(subject)
	if err != nil {
		return contract.Preview{}, err
	}
	d := s.Descriptor()
	return contract.Preview{
		SideEffect:   d.SideEffect,
		Capabilities: d.Capabilities,
		Subject:      js,
		Summary:      summary + " of MCP server " + strconv.Quote(s.srv.cfg.Name) + " (" + serverSummary(s.srv.subject) + ")",
	}, nil
}

// Definition is the server's: one rule covers its reads and gets.
func (s *Surface) Definition(context.Context) (json.RawMessage, error) {
	s.srv.mu.Lock()
	files := s.srv.files
	s.srv.mu.Unlock()
	if files == nil {
		files = map[string]string{}
	}
	return contract.CanonicalJSON(map[string]any{"files": files, "server": s.srv.definition})
}

// Execute makes the request under the server's call timeout.
func (s *Surface) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	in, err := s.parse(call)
	if err != nil {
		return contract.Result{}, err
	}
	op := s.method + " " + strconv.Quote(in.URI+in.Name)
	callCtx, leave := s.srv.inflight.enter(ctx)
	defer leave()
	callCtx, cancel := context.WithTimeout(callCtx, s.srv.callTimeout())
	defer cancel()
	if p := inputPassOf(ctx); p != nil {
		if went, err := s.passSurface(ctx, callCtx, p, op, in); err != nil {
			return contract.Result{}, err
		} else if went && s.asks != nil {
			contract.ReportInputRound(ctx, contract.InputRound{Asker: s.srv.cfg.Name, Keys: slices.Sorted(maps.Keys(s.asks))})
			return contract.Result{Text: "the server asked for input (" + strconv.Itoa(len(s.asks)) + " request(s)) before " + op}, nil
		} else if went {
			return s.done(in)
		}
	}
	if s.method == methodReadResource {
		res, err := s.conn.session.ReadResource(callCtx, &mcp.ReadResourceParams{URI: in.URI})
		if err != nil {
			return contract.Result{}, s.srv.callError(ctx, callCtx, s.conn, op, err)
		}
		s.read = res
		return s.done(in)
	}
	res, err := s.conn.session.GetPrompt(callCtx, &mcp.GetPromptParams{Name: in.Name, Arguments: in.Arguments})
	if err != nil {
		return contract.Result{}, s.srv.callError(ctx, callCtx, s.conn, op, err)
	}
	s.prompt = res
	return s.done(in)
}

// done finishes a read or get the server answered.
func (s *Surface) done(in surfaceInput) (contract.Result, error) {
	if s.method == methodReadResource {
		if s.served != in.URI {
			// Contents name the resource as the client does.
			for _, c := range s.read.Contents {
				if c != nil && c.URI == in.URI {
					c.URI = s.served
				}
			}
		}
		return contract.Result{Text: strconv.Itoa(len(s.read.Contents)) + " content(s) of " + in.URI}, nil
	}
	return contract.Result{Text: strconv.Itoa(len(s.prompt.Messages)) + " message(s) of prompt " + in.Name}, nil
}

// ReadResult is the server's answer to the read, once it ran; nil before.
func (s *Surface) ReadResult() *mcp.ReadResourceResult { return s.read }

// PromptResult is the server's answer to the prompt get; nil before.
func (s *Surface) PromptResult() *mcp.GetPromptResult { return s.prompt }
