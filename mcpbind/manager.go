//go:build unix

package mcpbind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/basis-go/basis/configfile"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/childenv"
	"github.com/basis-go/basis/mcpbind/signin"
	"github.com/basis-go/basis/subprocess"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// ManagerOptions configure a [Manager]; the zero value is every default.
type ManagerOptions struct {
	// Lookup finds ${VAR} values when a server starts (nil: os.LookupEnv).
	Lookup func(name string) (string, bool)
	// Env (nil: os.Environ()) is what stdio servers inherit, less BASIS_*
	// and credential-looking names other than PassEnv's (* patterns).
	Env     []string
	PassEnv []string
	// OnToolsChanged is told of a source's new tools, serially per source.
	OnToolsChanged func(source string, tools []contract.ExecutableTool)
	// HTTPClient reaches http and sse servers (nil: http.DefaultTransport).
	HTTPClient *http.Client
	// CloseGrace is how long a stdio server has to exit on EOF (0: 2 s).
	CloseGrace time.Duration
	Logger     *slog.Logger        // the SDK's logs (nil: none)
	Sandbox    subprocess.Confiner // each stdio server's program, as [SandboxName]
	// Track, when set, starts each stdio server's program (subprocess.Track).
	Track func(cmd *exec.Cmd, start func() error) (untrack func(), err error)
	// MaxOutputTokens: 0 the operator's, else 25,000; negative none.
	// OutputDir keeps whole results (empty: <user cache dir>/basis/mcp-output).
	MaxOutputTokens int
	OutputDir       string
	// ServerRequest answers servers' elicitation and sampling (nil: none).
	ServerRequest ServerRequestFunc
	// OnNotification is told of list_changed (uri "") and resources/updated.
	OnNotification func(method, uri string)
	// Tokens keeps sign-ins (nil: in memory); SignIn runs a sign-in's
	// browser half (nil: [*SignInError]). Package signin has both.
	Tokens signin.Store
	SignIn func(ctx context.Context, server string) (*signin.Flow, error)
	// Observer, for tracing, is told of each request sent to a server.
	Observer RequestObserver
}

// State is where a server is in its life, spelt as basis shows it.
type State string

const (
	StateNotStarted  State = "not started" // not asked for yet
	StateConnected   State = "connected"   // running, its tools listed
	StateFailed      State = "failed"      // did not start, or died (restarted at the next call)
	StateUntrusted   State = "untrusted"   // its workspace file is not trusted: never started
	StateUnavailable State = "unavailable" // its config cannot be used here (an unset ${VAR})
	StateClosed      State = "closed"      // the Manager was closed
)

// Status is one server's state, for "basis tools" and "basis check".
type Status struct {
	Server string
	Origin Origin
	File   string
	State  State
	Reason string // why it failed or is unavailable
	// Hidden counts tools filtered out; Refused lists, a line each,
	// those left out for their names.
	Tools   int
	Hidden  int
	Refused string
}

// String returns the state in words: "connected, 3 tools", "failed: …".
func (s Status) String() string {
	switch s.State {
	case StateConnected:
		text := "connected, " + strconv.Itoa(s.Tools) + " tools"
		if s.Tools == 1 {
			text = "connected, 1 tool"
		}
		if s.Hidden > 0 {
			text += " (" + strconv.Itoa(s.Hidden) + " hidden by enabled_tools/disabled_tools)"
		}
		if s.Refused != "" {
			text += "; not offered: " + strings.ReplaceAll(s.Refused, "\n", "; ")
		}
		return text
	case StateFailed:
		return "failed: " + s.Reason
	case StateUntrusted:
		if s.Reason != "" {
			return "untrusted: " + s.Reason
		}
		return errUntrusted.Error()
	case StateUnavailable:
		return "unavailable: " + s.Reason
	case StateClosed:
		return "closed"
	}
	return "not started"
}

// Manager runs the configured servers and offers their tools; it is safe
// for concurrent use.
type Manager struct {
	opts ManagerOptions
	cfg  *Config
	// problems are what Open found wrong in the config files.
	problems []error
	// inherited is what every stdio server inherits of opts.Env.
	inherited []string
	servers   map[string]*server
	names     []string // sorted
	closed    atomic.Bool
	pruneOnce sync.Once // old kept results are removed once per Manager
	subs      subscriptions
	// connectTo, when set (by tests), gives the transport for a server in
	// place of the configured one.
	connectTo func(ServerConfig) mcp.Transport
}

// NewManager returns a Manager for cfg's servers, starting nothing.
func NewManager(cfg *Config, o *ManagerOptions) *Manager {
	var opts ManagerOptions
	if o != nil {
		opts = *o
	}
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = defaultCloseGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{opts: opts, cfg: cfg, inherited: childenv.Inherited(opts.Env, opts.PassEnv), servers: map[string]*server{}}
	for _, sc := range cfg.Servers {
		s := &server{m: m, cfg: sc, state: StateNotStarted, trust: cfg.Trust(sc.Name), subject: serverSubject(sc), definition: serverDefinition(sc), root: cfg.Root}
		if f := cfg.fileOf(sc.Name); f != nil {
			// A workspace server runs from its file's directory.
			s.root, s.pinned = filepath.Dir(f.Path), f.Pinned
			if len(f.Changed) > 0 {
				s.reason = changedText(f.Path, f.Changed)
			}
		}
		switch {
		case s.trust != Trusted:
			s.state = StateUntrusted
		default:
			// An unset variable, or a cwd outside the workspace, is
			// known before anything starts, so "basis tools" can say so
			// without starting the server.
			if err := sc.Check(opts.Lookup); err != nil {
				s.state, s.reason = StateUnavailable, reasonOf(err)
			}
		}
		m.servers[sc.Name] = s
		m.names = append(m.names, sc.Name)
	}
	slices.Sort(m.names)
	return m
}

// Status returns every server's status, in name order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.servers[n].status())
	}
	return out
}

// serverFor returns the server whose tools are named like toolName, so a
// host that needs one tool starts only its server. A server with an
// empty tool_prefix may offer a tool of any name: it is returned only
// when no other server's prefix fits ([Manager.StartFor] starts them
// all).
func (m *Manager) serverFor(toolName string) (string, bool) {
	servers := m.serversFor(toolName)
	if len(servers) == 0 {
		return "", false
	}
	return servers[0], true
}

// serversFor returns the servers a tool named toolName could come from,
// the most likely first: those whose prefix begins it, longest prefix
// first, then the servers with an empty prefix, in name order.
func (m *Manager) serversFor(toolName string) []string {
	type match struct {
		server string
		n      int
	}
	var fits []match
	var anyName []string
	for _, n := range m.names {
		cfg := m.servers[n].cfg
		prefix := serverPrefix(n)
		if cfg.ToolPrefix != nil {
			prefix = *cfg.ToolPrefix
		}
		if prefix == "" {
			anyName = append(anyName, n)
			continue
		}
		if len(toolName) == contract.MaxNameLen && len(prefix) > contract.MaxNameLen-hashLen-1 {
			prefix = prefix[:contract.MaxNameLen-hashLen-1] // a shortened name keeps only this much
		}
		if strings.HasPrefix(toolName, prefix) {
			fits = append(fits, match{n, len(prefix)})
		}
	}
	slices.SortStableFunc(fits, func(a, b match) int { return b.n - a.n })
	out := make([]string, 0, len(fits)+len(anyName))
	for _, f := range fits {
		out = append(out, f.server)
	}
	return append(out, anyName...)
}

// start starts the named server, if it is not running, and lists its
// tools. It returns a [*ServerError] when the server is untrusted,
// unavailable or fails to start.
func (m *Manager) start(ctx context.Context, name string) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	_, err = s.ensure(ctx)
	return err
}

// StartAll starts every trusted, available server concurrently.
func (m *Manager) StartAll(ctx context.Context) error {
	var g errgroup.Group
	errs := make([]error, len(m.names))
	for i, n := range m.names {
		s := m.servers[n]
		if s.trust != Trusted {
			continue
		}
		g.Go(func() error {
			if _, err := s.ensure(ctx); err != nil && !errors.Is(err, configfile.ErrUnsetVariable) && !errors.Is(err, errOutsideWorkspace) {
				errs[i] = err
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// Tools returns every connected server's tools, starting nothing.
func (m *Manager) Tools() []contract.ExecutableTool {
	var out []contract.ExecutableTool
	for _, n := range m.names {
		out = append(out, m.servers[n].currentTools()...)
	}
	return out
}

// ServerTools starts server name if needed and returns its tools.
func (m *Manager) ServerTools(ctx context.Context, name string) ([]contract.ExecutableTool, error) {
	s, err := m.server(name)
	if err != nil {
		return nil, err
	}
	if _, err := s.ensure(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return asExecutable(s.tools), s.toolsErr
}

// Close stops every server (a stdio server's process group); calls fail.
func (m *Manager) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(m.names))
	for i, n := range m.names {
		wg.Go(func() { errs[i] = m.servers[n].close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) server(name string) (*server, error) {
	if m.closed.Load() {
		return nil, &ServerError{Server: name, Err: errClosed}
	}
	s := m.servers[name]
	if s == nil {
		return nil, &ServerError{Server: name, Err: fmt.Errorf("%w: no server of that name is configured", errUnknownServer)}
	}
	return s, nil
}

func (m *Manager) httpClient(headers http.Header) *http.Client {
	c := &http.Client{}
	if m.opts.HTTPClient != nil {
		*c = *m.opts.HTTPClient
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// The trace headers are set after the configured ones: a server's
	// configuration does not name the request's trace.
	c.Transport = &headerTransport{base: traceTransport{base: base, ids: m.opts.Observer != nil}, headers: headers}
	return c
}

// headerTransport sends a server's configured headers with every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = slices.Clone(v)
		}
	}
	return t.base.RoundTrip(req)
}

// server is one configured server and, while it runs, its session.
type server struct {
	m       *Manager
	cfg     ServerConfig
	trust   TrustState
	subject map[string]any
	// definition is the server's part of its tools' definitions.
	definition map[string]any
	// root is the workspace the files the server runs are pinned in;
	// pinned, for a workspace server, is what the operator trusted.
	root   string
	pinned map[string]string

	startMu   sync.Mutex // serialises starts and restarts
	oauth     *signIn    // an http or sse server's sign-in; under startMu
	refreshMu sync.Mutex // serialises re-reading the tools

	mu       sync.Mutex // guards what follows
	conn     *conn
	state    State
	reason   string
	tools    []*Tool
	toolsErr error
	// hidden is how many of the server's tools enabled_tools and
	// disabled_tools leave out.
	hidden int
	// files are the files the running server was started from, pinned
	// when it started: its tools' definitions show them.
	files map[string]string

	progress  sync.Map // progress token → the calling context
	nextToken atomic.Int64
	inflight  inflight // calls in flight, for what the server asks during one
	// modernConn is the session on protocol 2026-07-28 that calls passing
	// input requests through use ([InputPass]); modernNo is the main
	// session for which the server turned out not to speak it. Both
	// under mu; modernMu serialises opening it.
	modernMu   sync.Mutex
	modernConn *conn
	modernNo   *conn
	logs       logging
}

// conn is one session with a running server.
type conn struct {
	session *mcp.ClientSession
	stdio   *stdioTransport // nil for http and sse
	launch  *launch
	// ready is closed once session is set. A server may announce
	// list_changed during the handshake, before Connect has returned the
	// session, so a refresh waits for ready (or done) before using it.
	ready chan struct{}
	done  chan struct{} // closed when the session has ended, or never began
	stop  func()        // ends the context the session was connected with
	heard heard         // log and progress notifications read and handled
	acks  acks          // resources the server acknowledged subscriptions to
}

// close ends the session and what it runs.
func (c *conn) close() error {
	err := c.session.Close()
	if c.stop != nil {
		c.stop()
	}
	return err
}

func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) stderr(wait time.Duration) string {
	if c.stdio == nil {
		return ""
	}
	return c.stdio.stderr(wait)
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Server: s.cfg.Name, Origin: s.cfg.Origin, File: s.cfg.File, State: s.state, Reason: s.reason}
	if s.state == StateConnected {
		if s.conn != nil && s.conn.ended() {
			st.State, st.Reason = StateFailed, "the server exited; it restarts at the next call"
		}
		st.Tools, st.Hidden = len(s.tools), s.hidden
		if s.toolsErr != nil {
			st.Refused = s.toolsErr.Error()
		}
	}
	return st
}

func (s *server) currentTools() []contract.ExecutableTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected {
		return nil
	}
	return asExecutable(s.tools)
}

func (s *server) startupTimeout() time.Duration {
	return cmpOr(s.cfg.StartupTimeout, defaultStartupTimeout)
}

func (s *server) callTimeout() time.Duration {
	return cmpOr(s.cfg.CallTimeout, defaultCallTimeout)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (s *server) fail(state State, err error) error {
	s.mu.Lock()
	s.state, s.reason = state, reasonOf(err)
	s.mu.Unlock()
	return err
}

// reasonOf is the first line of err's message without the server's name,
// for a status line.
func reasonOf(err error) string {
	var se *ServerError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	var ce *configfile.Error
	if errors.As(err, &ce) && ce.Err != nil {
		if ce.Field == "" {
			return ce.Err.Error()
		}
		return ce.Field + ": " + ce.Err.Error()
	}
	text, _, _ := strings.Cut(err.Error(), "\n")
	return text
}

// ensure returns a live session, starting the server (again) if needed.
func (s *server) ensure(ctx context.Context) (*conn, error) {
	if s.trust != Trusted {
		return nil, &ServerError{Server: s.cfg.Name, Op: "start", Err: s.untrusted()}
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if s.m.closed.Load() {
		return nil, &ServerError{Server: s.cfg.Name, Op: "start", Err: errClosed}
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil && !c.ended() {
		return c, nil
	}
	if c != nil {
		_ = c.close() // reap the dead one and its process group
	}
	return s.start(ctx)
}

// untrusted is why an untrusted server does not start.
func (s *server) untrusted() error {
	s.mu.Lock()
	reason := s.reason
	s.mu.Unlock()
	if reason == "" {
		return errUntrusted
	}
	return &problem{kind: errUntrusted, text: "untrusted: " + reason}
}

// pin hashes what the server runs from the workspace, at each start, and
// refuses to start a workspace server whose files are not those the
// operator trusted: a sandboxed command may have rewritten one since
// basis read the trust store.
func (s *server) pin(ctx context.Context) error {
	files, err := pinFiles(ctx, s.cfg, s.root)
	if err != nil {
		return s.fail(StateFailed, &ServerError{Server: s.cfg.Name, Op: "start", Err: err})
	}
	if s.cfg.Origin.workspace() {
		var changed []string
		for path, pin := range files {
			if s.pinned[path] != pin {
				changed = append(changed, path)
			}
		}
		if len(changed) > 0 {
			slices.Sort(changed)
			text := changedText(s.cfg.File, changed)
			s.mu.Lock()
			s.state, s.reason = StateUntrusted, text
			s.mu.Unlock()
			return &ServerError{Server: s.cfg.Name, Op: "start", Err: &problem{kind: errUntrusted, text: "untrusted: " + text}}
		}
	}
	s.mu.Lock()
	s.files = files
	s.mu.Unlock()
	return nil
}

func (s *server) start(ctx context.Context) (*conn, error) {
	l, err := s.cfg.expand(s.m.opts.Lookup)
	if err == nil {
		// Resolved at every start, not only when the Manager was made: a
		// program that can write the workspace may have swapped the
		// directory for a link since.
		l.cwd, err = s.cfg.workdir(l)
	}
	if err != nil {
		state := StateUnavailable
		if errors.Is(err, ErrStart) {
			state = StateFailed
		}
		return nil, s.fail(state, &ServerError{Server: s.cfg.Name, Op: "start", Err: err})
	}
	if err := s.pin(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.startupTimeout())
	defer cancel()
	c := &conn{launch: l, ready: make(chan struct{}), done: make(chan struct{})}
	clientOpts := &mcp.ClientOptions{
		Logger:       s.m.opts.Logger,
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// The handler runs on the session's reading goroutine; reading
			// the list from there would wait on itself.
			go s.refresh(c)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer c.heard.handledOne()
			s.progressStep(c, req.Params)
		},
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 (SEP-2577) but works through its deprecation window, and a gateway passes on what servers log (issue 22)
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			defer c.heard.handledOne()
			s.logMessage(c, req.Params)
		},
	}
	s.forwarding(clientOpts)
	s.noticing(clientOpts)
	client := mcp.NewClient(&mcp.Implementation{Name: "basis", Version: "0.1.0"}, clientOpts)
	s.forwardingMiddleware(client)
	s.observing(client)
	c.acks.hearing(client)
	session, err := connect(ctx, c, client, s.transport(c, l), s.sessionOptions())
	if err != nil && s.sessionOptions() != nil && s.cfg.Type != TypeStdio && newestOnly(err) {
		// A server of 2026-07-28 alone has no initialize: it asks through
		// input requests, which the SDK answers with the same handlers.
		session, err = connect(ctx, c, client, s.transport(c, l), nil)
	}
	if err != nil {
		close(c.done) // a refresh waiting for the session gives up
		if c.stdio != nil {
			c.stdio.kill()
		}
		text := "it could not be started or did not complete the MCP handshake: " + l.redact(err.Error())
		if ctx.Err() != nil {
			text = "it did not complete the MCP handshake within " + s.startupTimeout().String() + "; set startup_timeout_ms for a slower server"
		}
		return nil, s.fail(StateFailed, &ServerError{Server: s.cfg.Name, Op: "start", Stderr: c.stderr(500 * time.Millisecond),
			Err: &problem{kind: ErrStart, cause: err, text: text}})
	}
	c.session = session
	close(c.ready)
	go func() {
		_ = session.Wait()
		close(c.done)
	}()
	// From protocol 2026-07-28 on, Connect asks for tools/list_changed
	// and returns before the server has subscribed the session: a change
	// the server makes in between is announced to no one. The first list
	// is read once the server says it listens, so it holds such a change
	// — or, from a server slow to say so, after a while, and again when
	// it does (see readAgainOnceListening).
	listenLate := false
	if listensForTools(session) {
		select {
		case <-c.acks.toolsListening():
		case <-c.done:
		case <-ctx.Done():
		case <-time.After(listenWait):
			listenLate = true
		}
	}
	tools, toolsErr, err := s.listTools(ctx, c)
	if err != nil {
		_ = c.close()
		return nil, s.fail(StateFailed, &ServerError{Server: s.cfg.Name, Op: "start", Stderr: c.stderr(500 * time.Millisecond),
			Err: &problem{kind: ErrStart, cause: err, text: "listing its tools failed: " + l.redact(err.Error())}})
	}
	// Before the session is published and serves a call, so an update
	// the first call brings about reaches the subscribers.
	s.resubscribe(ctx, c)
	s.mu.Lock()
	restarted, before := s.conn != nil || s.tools != nil, toolNamesOf(s.tools)
	s.conn, s.tools, s.toolsErr = c, tools, toolsErr
	s.state, s.reason = StateConnected, ""
	s.mu.Unlock()
	if listenLate {
		// Once the session is published: a refresh of a session that is
		// not the server's current one is dropped.
		go s.readAgainOnceListening(c)
	}
	// A Manager closed meanwhile closes this session too: its close waits
	// for startMu, which the caller holds until this returns.
	if restarted && !slices.Equal(before, toolNamesOf(tools)) {
		// A restarted server may offer other tools than it did.
		go s.notify(tools)
	}
	return c, nil
}

// transport is a new transport to the server for c, as l launches it.
func (s *server) transport(c *conn, l *launch) mcp.Transport {
	var transport mcp.Transport
	switch s.cfg.Type {
	case TypeStdio:
		c.stdio = newStdioTransport(l, s.m.inherited, s.m.opts.CloseGrace, l.redact)
		c.stdio.track = s.m.opts.Track
		c.stdio.sandbox, c.stdio.tool = s.m.opts.Sandbox, SandboxName(s.cfg.Name)
		transport = c.stdio
	case TypeSSE:
		hc := s.m.httpClient(l.headers)
		hc.Transport = &authTransport{base: hc.Transport, handler: s.oauthFor(l)}
		transport = &mcp.SSEClientTransport{Endpoint: l.url, HTTPClient: hc}
	default:
		transport = &mcp.StreamableClientTransport{Endpoint: l.url, HTTPClient: s.m.httpClient(l.headers), OAuthHandler: s.oauthFor(l)}
	}
	if s.m.connectTo != nil {
		transport = s.m.connectTo(s.cfg)
	}
	return hearing(transport, &c.heard, s.m.opts.Observer != nil)
}

func toolNamesOf(tools []*Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.desc.Name
	}
	return names
}

// notify tells the host the server's tools changed.
func (s *server) notify(tools []*Tool) {
	cb := s.m.opts.OnToolsChanged
	if cb == nil {
		return
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	cb(sourceOf(s.cfg), asExecutable(tools))
}

// connect connects client over transport under ctx's deadline. The SDK
// ties an sse session's event stream to the context Connect is given, so
// Connect gets a context that lives as long as the session (c.stop ends
// it); ctx bounds only the waiting.
func connect(ctx context.Context, c *conn, client *mcp.Client, transport mcp.Transport, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	type result struct {
		session *mcp.ClientSession
		err     error
	}
	done := make(chan result, 1)
	go func() {
		session, err := client.Connect(life, transport, opts)
		done <- result{session, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			stop()
			return nil, r.err
		}
		c.stop = stop
		return r.session, nil
	case <-ctx.Done():
		stop()
		if c.stdio != nil {
			c.stdio.kill()
		}
		if r := <-done; r.session != nil {
			_ = r.session.Close()
		}
		return nil, ctx.Err()
	}
}

// Bounds on what one server's tools/list may hand over, whichever way it
// is read (at start, after a restart, on list_changed): a server that pages
// forever, repeats a cursor or sends enormous definitions fails with an
// error naming it and the bound, instead of taking the memory of basis.
const (
	// maxToolPages is the most pages of tools/list read from one server.
	maxToolPages = 100
	// maxTools is the most tools one server may offer.
	maxTools = 10_000
	// maxToolBytes bounds the tool definitions of one server, as JSON
	// (names, descriptions, schemas, annotations), and its cursors.
	maxToolBytes = 16 << 20
)

// listTools reads every page of tools/list, within the bounds above, and
// binds the tools. Tools whose names collide are left out and reported in
// toolsErr.
func (s *server) listTools(ctx context.Context, c *conn) (tools []*Tool, toolsErr error, err error) {
	var remote []*mcp.Tool
	size := 0
	seen := make(map[string]bool)
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		res, err := c.session.ListTools(ctx, params)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(remote) == maxTools {
				return nil, nil, listBound("it offers more than " + strconv.Itoa(maxTools) + " tools")
			}
			def, err := json.Marshal(t)
			if err != nil {
				return nil, nil, err
			}
			if size += len(def); size > maxToolBytes {
				return nil, nil, listBound("its tool definitions are larger than " + strconv.Itoa(maxToolBytes>>20) + " MiB")
			}
			remote = append(remote, t)
		}
		next := res.NextCursor
		if next == "" {
			break
		}
		if seen[next] || next == params.Cursor {
			return nil, nil, listBound("it sent the same tools/list cursor twice (on page " + strconv.Itoa(page) + "), which would page forever")
		}
		if page == maxToolPages {
			return nil, nil, listBound("it has more than " + strconv.Itoa(maxToolPages) + " pages of tools")
		}
		if size += len(next); size > maxToolBytes {
			return nil, nil, listBound("its tool definitions are larger than " + strconv.Itoa(maxToolBytes>>20) + " MiB")
		}
		seen[next] = true
		params = &mcp.ListToolsParams{Cursor: next}
	}
	return s.bind(remote)
}

func listBound(text string) error { return newProblem(errToolListBound, text) }

// refresh re-reads the tools after a list_changed notification and tells
// the host.
func (s *server) refresh(c *conn) {
	// The tools/list that follows the handshake reads whatever changed
	// during it; a notification from then must only not read a session
	// that is not set yet.
	select {
	case <-c.ready:
	case <-c.done:
		return
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if c.ended() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.startupTimeout())
	defer cancel()
	tools, toolsErr, err := s.listTools(ctx, c)
	if err != nil {
		s.m.opts.Logger.Warn("re-reading an MCP server's tools failed", "server", s.cfg.Name, "error", c.launch.redact(err.Error()))
		return
	}
	s.mu.Lock()
	if s.conn != c && s.modernConn != c {
		s.mu.Unlock()
		return // a restart has listed the tools since
	}
	s.tools, s.toolsErr = tools, toolsErr
	s.mu.Unlock()
	if toolsErr != nil {
		s.m.opts.Logger.Warn("an MCP server's tools collide", "server", s.cfg.Name, "error", toolsErr.Error())
	}
	if cb := s.m.opts.OnToolsChanged; cb != nil {
		cb(sourceOf(s.cfg), asExecutable(tools)) // refreshMu is held
	}
}

// readAgainOnceListening reads the server's tools again once it says it
// listens for the session, which it had not when they were first read.
func (s *server) readAgainOnceListening(c *conn) {
	select {
	case <-c.acks.toolsListening():
		s.refresh(c)
	case <-c.done:
	}
}

// listenWait bounds how long a server's first tools/list waits for the
// server to say it listens for the session (see start): a server says so
// as soon as it reads the request; one that does not is listed anyway.
var listenWait = 2 * time.Second

// progressLinger is how long a call's progress token stays registered
// after the call returned.
const progressLinger = time.Second

// call runs one tool call. It is never retried: a call in flight when the
// server died fails, and the next call restarts the server.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage) (contract.Result, error) {
	op := "call tool " + strconv.Quote(tool)
	c, err := s.ensure(ctx)
	if err != nil {
		var se *ServerError
		if errors.As(err, &se) {
			se2 := *se
			se2.Op = op
			return contract.Result{}, &se2
		}
		return contract.Result{}, err
	}
	pass := inputPassOf(ctx)
	if pass != nil && pass.Ask == nil {
		pass = nil
	}
	if pass != nil {
		mc, err := s.modern(ctx, c)
		if err != nil {
			return contract.Result{}, err
		}
		if mc == nil {
			pass = nil
		} else {
			c = mc
		}
	}
	callCtx, leave := s.inflight.enter(ctx)
	defer leave()
	callCtx, cancel := context.WithTimeout(callCtx, s.callTimeout())
	defer cancel()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if tc, ok := contract.TraceContextOf(ctx); ok {
		// The MCP semantic conventions' carrier: the server's work joins
		// the call's trace.
		params.Meta = mcp.Meta{"traceparent": tc.Parent}
		if tc.State != "" {
			params.Meta["tracestate"] = tc.State
		}
	}
	if contract.HasProgress(ctx) {
		token := "basis-" + strconv.FormatInt(s.nextToken.Add(1), 10)
		s.progress.Store(token, ctx)
		// The SDK hands notifications to their handler on a queue of
		// their own, so one sent just before the result may be handled
		// just after it: the token lingers a moment to deliver it.
		defer time.AfterFunc(progressLinger, func() { s.progress.Delete(token) })
		params.SetProgressToken(token)
	}
	defer s.watchLog(ctx, c, params)()
	var res *mcp.CallToolResult
	if pass == nil {
		res, err = c.session.CallTool(callCtx, params)
	} else {
		err = s.passRounds(callCtx, pass, func(meta mcp.Meta, resp mcp.InputResponseMap, state string) (mcp.InputRequestMap, string, error) {
			p := *params
			p.Meta = maps.Clone(params.Meta)
			if p.Meta == nil {
				p.Meta = mcp.Meta{}
			}
			maps.Copy(p.Meta, meta)
			p.InputResponses, p.RequestState = resp, state
			r, err := c.session.CallTool(callCtx, &p)
			if err != nil || r.InputRequests == nil {
				res = r
				return nil, "", err
			}
			return r.InputRequests, r.RequestState, nil
		})
	}
	// What the server logged before its result reaches the caller before
	// the result does (see heard).
	c.heard.wait(ctx, c.done)
	var refused *passRefused
	if errors.As(err, &refused) {
		return contract.Result{}, &ServerError{Server: s.cfg.Name, Op: op, Err: refused.err}
	}
	if err != nil {
		return contract.Result{}, s.callError(ctx, callCtx, c, op, err)
	}
	out := resultOf(res, c.launch)
	s.budgetResult(&out)
	if res.IsError {
		text := out.Text
		if text == "" {
			text = "the tool failed and said nothing more"
		}
		return contract.Result{}, &contract.ResultError{Result: out,
			Err: &ServerError{Server: s.cfg.Name, Op: op, Err: &problem{kind: errToolError, text: text}}}
	}
	return out, nil
}

func (s *server) callError(ctx, callCtx context.Context, c *conn, op string, err error) error {
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		return &ServerError{Server: s.cfg.Name, Op: op, Err: &problem{kind: errProtocol, cause: err,
			text: "the server refused the call (code " + strconv.FormatInt(wire.Code, 10) + "): " + c.launch.redact(wire.Message)}}
	case ctx.Err() != nil:
		return &ServerError{Server: s.cfg.Name, Op: op, Err: fmt.Errorf("the call was cancelled: %w", ctx.Err())}
	case callCtx.Err() != nil:
		return &ServerError{Server: s.cfg.Name, Op: op, Err: &problem{kind: errCallTimeout, cause: callCtx.Err(),
			text: "no answer within " + s.callTimeout().String() + "; the call may still have had an effect. Set call_timeout_ms for a slower server"}}
	}
	// Anything else is a broken connection: wait for the session to end,
	// so a dead server is told apart from a garbled answer.
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
	if c.ended() || errors.Is(err, mcp.ErrConnectionClosed) {
		s.fail(StateFailed, errors.New("the server exited; it restarts at the next call"))
		return &ServerError{Server: s.cfg.Name, Op: op, Stderr: c.stderr(time.Second), Err: &problem{kind: ErrServerDied, cause: err,
			text: "the server's connection ended while the call was in flight, so it may or may not have had its effect; it was not retried. The next call restarts the server"}}
	}
	return &ServerError{Server: s.cfg.Name, Op: op, Err: &problem{kind: errProtocol, cause: err, text: c.launch.redact(err.Error())}}
}

func (s *server) close() error {
	s.closeModern()
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	if s.state == StateConnected || s.state == StateFailed || s.state == StateNotStarted {
		s.state = StateClosed
	}
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	if err := c.close(); err != nil && !c.ended() {
		return &ServerError{Server: s.cfg.Name, Op: "close", Err: errors.New(c.launch.redact(err.Error()))}
	}
	return nil
}

// resultText turns a call's content into what the model reads: text joined
// with newlines, other content summarised, and structured content as JSON
// when there is no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			hasText = true
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+", "+strconv.Itoa(len(c.Data))+" bytes]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+", "+strconv.Itoa(len(c.Data))+" bytes]")
		case *mcp.ResourceLink:
			parts = append(parts, "[resource link "+c.URI+"]")
		case *mcp.EmbeddedResource:
			parts = append(parts, resourceSummary(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append([]string{string(b)}, parts...)
		}
	}
	return strings.Join(parts, "\n")
}

func resourceSummary(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	size := len(r.Blob)
	if r.Text != "" {
		size = len(r.Text)
	}
	head := "[resource " + r.URI
	if r.MIMEType != "" {
		head += " " + r.MIMEType
	}
	return head + ", " + strconv.Itoa(size) + " bytes]"
}
