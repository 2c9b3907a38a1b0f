//go:build unix

package mcpbind

import (
	"context"
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

// Subscriptions returns the URIs clients are subscribed to through
// [Manager.Subscribe], as they subscribed, each with how many
// subscriptions it has: what a host carries over to the Manager that
// replaces this one, so clients keep hearing of their resources.
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
		if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: own}); err != nil {
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
