//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The notifications [ManagerOptions.OnNotification] passes on, spelt as
// MCP spells them.
const (
	notePromptsChanged   = "notifications/prompts/list_changed"
	noteResourcesChanged = "notifications/resources/list_changed"
	noteResourceUpdated  = "notifications/resources/updated"
)

// subscriptions are the resources clients subscribed to through the
// Manager: for each server's own URI, the URIs as clients subscribed to
// them (one qualified, or as the server spells it) and how many
// subscriptions each has, so a server's update reaches the URI the
// client knows and one client's unsubscription does not end another's.
type subscriptions struct {
	mu sync.Mutex
	m  map[subscription]map[string]int
}

type subscription struct{ server, uri string }

// add counts a subscription to served, which is own of server.
func (s *subscriptions) add(server, own, served string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[subscription]map[string]int{}
	}
	k := subscription{server, own}
	if s.m[k] == nil {
		s.m[k] = map[string]int{}
	}
	s.m[k][served]++
}

// remove undoes add and reports whether nobody is subscribed to own of
// server any more, so the server may be told.
func (s *subscriptions) remove(server, own, served string) (last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := subscription{server, own}
	if n := s.m[k][served]; n > 1 {
		s.m[k][served] = n - 1
		return false
	}
	delete(s.m[k], served)
	if len(s.m[k]) > 0 {
		return false
	}
	delete(s.m, k)
	return true
}

// served returns the URIs clients subscribed to own of server by.
func (s *subscriptions) served(server, own string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for u := range s.m[subscription{server, own}] {
		out = append(out, u)
	}
	return out
}

// all returns every served URI with its count of subscriptions.
func (s *subscriptions) all() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, byServed := range s.m {
		for u, n := range byServed {
			out[u] += n
		}
	}
	return out
}

// Subscriptions counts each URI's subscriptions, for a host to carry
// over to a Manager that replaces this one.
func (m *Manager) Subscriptions() map[string]int { return m.subs.all() }

// owned returns the server's own URIs somebody is subscribed to.
func (s *subscriptions) owned(server string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.m {
		if k.server == server {
			out = append(out, k.uri)
		}
	}
	return out
}

// resubscribe subscribes a new session of the server to every resource
// clients are still subscribed to through the Manager: a restarted
// server has forgotten them, and its updates would otherwise stop
// without a word. A refusal is logged, not fatal: the server's tools
// work without it.
func (s *server) resubscribe(ctx context.Context, c *conn) {
	for _, own := range s.m.subs.owned(s.cfg.Name) {
		if err := c.subscribe(ctx, own); err != nil {
			s.m.opts.Logger.Warn("subscribing a restarted MCP server to a resource again failed", "server", s.cfg.Name, "uri", own, "error", c.launch.redact(err.Error()))
		}
	}
}

// noticing sets the handlers that pass a server's changed prompts,
// resources and subscribed resources on to [ManagerOptions.OnNotification].
// The SDK runs them off the session's reading goroutine, in order.
func (s *server) noticing(o *mcp.ClientOptions) {
	note := s.m.opts.OnNotification
	if note == nil {
		return
	}
	o.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { note(notePromptsChanged, "") }
	o.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { note(noteResourcesChanged, "") }
	o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params == nil {
			return
		}
		// Only what a client subscribed to: a server cannot make basis
		// announce a URI nobody asked about.
		for _, u := range s.m.subs.served(s.cfg.Name, req.Params.URI) {
			note(noteResourceUpdated, u)
		}
	}
}

// acks are the resources a server acknowledged subscriptions to. From
// protocol 2026-07-28 on, a session's Subscribe only sends
// subscriptions/listen and returns; the server subscribes after, and says
// so with notifications/subscriptions/acknowledged. Until then an update
// a call brings about would reach nobody.
type acks struct {
	mu      sync.Mutex
	acked   map[string]bool
	waiting map[string][]chan struct{}
	// tools is closed once the server says it sends the session
	// tools/list_changed (see toolsListening).
	tools     chan struct{}
	toolsOnce sync.Once
}

// hearing has the client's sessions report acknowledgements to a.
func (a *acks) hearing(c *mcp.Client) {
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				a.heard(p.Notifications.ResourceSubscriptions)
				if p.Notifications.ToolsListChanged {
					a.heardTools()
				}
			}
			return next(ctx, method, req)
		}
	})
}

// toolsListening returns a channel closed once the server has said it
// sends the session tools/list_changed.
func (a *acks) toolsListening() chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tools == nil {
		a.tools = make(chan struct{})
	}
	return a.tools
}

func (a *acks) heardTools() {
	listening := a.toolsListening()
	a.toolsOnce.Do(func() { close(listening) })
}

// listensForTools reports whether the session asked the server for
// tools/list_changed through subscriptions/listen, as the SDK's Connect
// does from protocol 2026-07-28 on when the server offers it (and the
// client handles it, as every session of a server does).
func listensForTools(s *mcp.ClientSession) bool {
	if !newProtocol(s) {
		return false
	}
	caps := s.InitializeResult().Capabilities
	return caps != nil && caps.Tools != nil && caps.Tools.ListChanged
}

func (a *acks) heard(uris []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acked == nil {
		a.acked = map[string]bool{}
	}
	for _, u := range uris {
		a.acked[u] = true
		for _, ch := range a.waiting[u] {
			close(ch)
		}
		delete(a.waiting, u)
	}
}

// expect returns a channel closed once uri is acknowledged: at once if it
// was already.
func (a *acks) expect(uri string) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch := make(chan struct{})
	if a.acked[uri] {
		close(ch)
		return ch
	}
	if a.waiting == nil {
		a.waiting = map[string][]chan struct{}{}
	}
	a.waiting[uri] = append(a.waiting[uri], ch)
	return ch
}

// forget is told of an unsubscription: a later subscription is
// acknowledged anew.
func (a *acks) forget(uri string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.acked, uri)
}

// subscribe subscribes the session to the server's own uri and returns
// once the server has subscribed.
func (c *conn) subscribe(ctx context.Context, uri string) error {
	acked := c.acks.expect(uri)
	if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	if !newProtocol(c.session) {
		return nil // resources/subscribe is answered once subscribed
	}
	select {
	case <-acked:
		return nil
	case <-c.done:
		return errors.New("the server's session ended before it acknowledged the subscription")
	case <-ctx.Done():
		return ctx.Err()
	}
}
