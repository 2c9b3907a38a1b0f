package mcpserve

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
)

// GatewayOptions configures a [Gateway]; nil means every default.
type GatewayOptions struct {
	// Open opens the MCP client of the servers the gateway fronts,
	// starting nothing: at the first build, and again when one of
	// ClientFiles changed. The gateway has set o's ServerRequest and
	// OnToolsChanged; Open sets the rest. Nil: no MCP servers.
	Open func(ctx context.Context, o *mcpbind.ManagerOptions) *mcpbind.Manager
	// Watch and ClientFiles are the files the runtime and the MCP client
	// are made from, looked at every Interval (default a second): a
	// change to one, once it looks the same at the next look, rebuilds
	// the runtime, to one of ClientFiles with a new client. A broken
	// edit keeps the runtime from before.
	Watch, ClientFiles []string
	Interval           time.Duration
	// Depth is [RuntimeRoster.Depth]; Logger, [ServerOptions.Logger],
	// also told of reloads and of each MCP server's state.
	Depth  int
	Logger *slog.Logger
	// DisplayPath shows a config file's path in a log line; nil: as it is.
	DisplayPath func(path string) string
	// Observer is [ServerOptions.Observer].
	Observer RequestObserver
}

// Gateway is what `basis serve` runs: a [Server] of a runtime and its MCP
// servers' surfaces ([GatewaySurfaces]) and questions ([Forward]), each
// server's changed tools replaced in it, rebuilt when a watched file changes.
type Gateway struct {
	*Server
	build  func(context.Context, func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error)
	opts   GatewayOptions
	roster *RuntimeRoster
	// mu guards client and stamps: a reload and a server's changed tools
	// do not run side by side.
	mu       sync.Mutex
	client   *mcpbind.Manager
	stamps   map[string]fileStamp
	stop     context.CancelFunc
	watching chan struct{}
}

// NewGateway serves the runtime build makes from the files as they are
// now, and watches them until ctx is done or [Gateway.Close]. build calls
// mcpTools last, once every other tool loaded: it starts the servers of a
// new client. A reload's joined error is logged one error a line.
func NewGateway(ctx context.Context, build func(ctx context.Context, mcpTools func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error), opts *GatewayOptions) (*Gateway, error) {
	g := &Gateway{build: build, watching: make(chan struct{})}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Interval <= 0 {
		g.opts.Interval = time.Second
	}
	if g.opts.DisplayPath == nil {
		g.opts.DisplayPath = func(p string) string { return p }
	}
	if g.opts.Logger == nil {
		g.opts.Logger = slog.New(slog.DiscardHandler)
	}
	g.roster = &RuntimeRoster{Depth: g.opts.Depth}
	g.stamps = g.stamp()
	g.mu.Lock()
	rt, err := g.build(ctx, g.mcpTools)
	client := g.client
	g.mu.Unlock()
	if err != nil {
		closeClient(client)
		return nil, err
	}
	g.roster.Store(rt)
	g.logClient(client)
	srv := NewServer(g.roster, &ServerOptions{Logger: g.opts.Logger, Observer: g.opts.Observer,
		Surfaces: &GatewaySurfaces{Manager: g.manager, Runtime: g.roster.Load, Depth: g.opts.Depth}})
	g.mu.Lock() // a server's notification may come any time
	g.Server = srv
	g.mu.Unlock()
	wctx, stop := context.WithCancel(ctx)
	g.stop = stop
	go g.watch(wctx)
	return g, nil
}

// Close stops watching and closes the MCP client: its servers stop.
func (g *Gateway) Close() error {
	g.stop()
	<-g.watching
	// Closed outside the lock: a server's changed tools wait for it.
	return closeClient(g.manager())
}

// manager is the MCP client served now.
func (g *Gateway) manager() *mcpbind.Manager {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.client
}

// mcpTools returns the client's tools, opening the client and starting
// its servers when there is none (the first build, or a reload whose
// client files changed). Called by build, under g.mu.
func (g *Gateway) mcpTools(ctx context.Context) ([]contract.ExecutableTool, error) {
	if g.opts.Open == nil {
		return nil, nil
	}
	if g.client == nil {
		var m *mcpbind.Manager
		m = g.opts.Open(ctx, &mcpbind.ManagerOptions{ServerRequest: Forward,
			OnToolsChanged: func(source string, tools []contract.ExecutableTool) { g.toolsChanged(m, source, tools) },
			OnNotification: func(method, uri string) { g.notify(m, method, uri) }})
		g.client = m
		// Failures show in the servers' status.
		_ = m.StartAll(ctx)
	}
	return g.client.Tools(), nil
}

// toolsChanged replaces a server's tools in the served runtime when the
// server says they changed.
func (g *Gateway) toolsChanged(m *mcpbind.Manager, source string, tools []contract.ExecutableTool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m != g.client || g.roster.Load() == nil {
		return // a client a reload replaced, or a runtime not served yet
	}
	if err := g.roster.Load().ReplaceMCPSource(source, tools); err != nil {
		g.logf("the new tools of %s are not served: %v", source, err)
	}
}

// notify passes on what a server of m said changed besides its tools.
func (g *Gateway) notify(m *mcpbind.Manager, method, uri string) {
	g.mu.Lock()
	srv := g.Server
	current := m == g.client
	g.mu.Unlock()
	if current && srv != nil {
		srv.Notify(method, uri)
	}
}

// logClient says how each server of m is doing, and which config
// problems left servers out.
func (g *Gateway) logClient(m *mcpbind.Manager) {
	if m == nil {
		return
	}
	for _, err := range m.Problems() {
		g.logf("%v; left out", err)
	}
	for _, s := range m.Status() {
		source := "host"
		if s.File != "" {
			source = g.opts.DisplayPath(s.File)
		}
		line, _, _ := strings.Cut(strings.TrimSpace(s.String()), "\n")
		g.logf("MCP server %s (%s): %s", s.Server, source, strings.TrimSpace(line))
	}
}

// watch reloads when a file changes, until ctx is done.
func (g *Gateway) watch(ctx context.Context) {
	defer close(g.watching)
	if len(g.opts.Watch)+len(g.opts.ClientFiles) == 0 {
		return
	}
	tick := time.NewTicker(g.opts.Interval)
	defer tick.Stop()
	g.mu.Lock()
	seen := g.stamps // what the first build was made from
	g.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// An edit is loaded once two looks in a row find the files
			// alike: one seen in the middle of its write (truncated, or
			// stamped again as the write ends) would be loaded twice,
			// and the MCP servers restarted twice.
			now := g.stamp()
			if !maps.Equal(now, seen) {
				seen = now
				continue
			}
			g.reloadIfChanged(ctx, now)
		}
	}
}

// reloadIfChanged rebuilds the runtime when a watched file's stamp in
// now differs from the last build's; the MCP client is kept unless one of
// its files changed. A broken edit keeps the last good runtime and says
// why.
func (g *Gateway) reloadIfChanged(ctx context.Context, now map[string]fileStamp) {
	// A replaced client is closed after the lock is given up: its
	// servers' changed tools wait for the lock.
	var stale *mcpbind.Manager
	defer func() { closeClient(stale) }()
	g.mu.Lock()
	defer g.mu.Unlock()
	var changed, clientChanged bool
	for p, st := range now {
		if old, ok := g.stamps[p]; !ok || old != st {
			changed = true
			clientChanged = clientChanged || slices.Contains(g.opts.ClientFiles, p)
		}
	}
	if !changed {
		return
	}
	g.stamps = now
	old := g.client
	if clientChanged {
		g.client = nil
	}
	rt, err := g.build(ctx, g.mcpTools)
	if err != nil {
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, err := range errs {
			g.logf("reload: %v", err)
		}
		g.logf("the configuration has problems; still serving the tools from before the edit")
		if clientChanged {
			stale, g.client = g.client, old
		}
		return
	}
	g.roster.Store(rt)
	if clientChanged {
		stale = old
	}
	g.logf("reloaded: %d tools", len(rt.Tools()))
	if clientChanged {
		g.logClient(g.client)
		g.carrySubscriptions(ctx, old, g.client)
		// Other servers, other prompts and resources.
		g.Notify("notifications/prompts/list_changed", "")
		g.Notify("notifications/resources/list_changed", "")
	}
	g.Refresh()
}

// carrySubscriptions subscribes the new client to what clients were
// subscribed to through the old one, so they go on hearing of their
// resources; a resource no server of the new client owns is said.
func (g *Gateway) carrySubscriptions(ctx context.Context, old, now *mcpbind.Manager) {
	if old == nil || now == nil {
		return
	}
	subs := old.Subscriptions()
	for _, uri := range slices.Sorted(maps.Keys(subs)) {
		for range subs[uri] {
			if err := now.Subscribe(ctx, uri); err != nil {
				g.logf("reload: clients subscribed to %s hear no more of it: %v", uri, err)
				break
			}
		}
	}
}

func (g *Gateway) logf(format string, args ...any) {
	g.opts.Logger.Info(fmt.Sprintf(format, args...))
}

// fileStamp is what tells that a file was edited: its size and
// modification time, or that it does not exist.
type fileStamp struct {
	exists bool
	size   int64
	mtime  time.Time
}

func (g *Gateway) stamp() map[string]fileStamp {
	out := map[string]fileStamp{}
	for _, p := range slices.Concat(g.opts.Watch, g.opts.ClientFiles) {
		var st fileStamp
		if info, err := os.Stat(p); err == nil {
			st = fileStamp{exists: true, size: info.Size(), mtime: info.ModTime()}
		}
		out[p] = st
	}
	return out
}

// closeClient stops the client's servers; a nil client has none.
func closeClient(m *mcpbind.Manager) error {
	if m == nil {
		return nil
	}
	return m.Close()
}
