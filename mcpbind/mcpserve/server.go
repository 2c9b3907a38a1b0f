package mcpserve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Roster is what a [Server] serves: a runtime's tools behind an adapter the
// host writes. Implementations must be safe for concurrent use: the server
// calls Call from many goroutines at once. It runs one client's calls of
// tools that are not Parallel one at a time, as in a model's turn, and
// never holds up one client's calls for another's.
type Roster interface {
	// Tools returns the descriptors of every tool to serve. It is read when
	// the server is made and again on every [Server.Refresh].
	Tools() []contract.Descriptor
	// Call runs one call through the whole pipeline (schema, preview, gate,
	// execute, audit) and returns the text the model reads and whether it
	// is an error: a tool error, or a refusal of any kind (unknown tool,
	// invalid input, preview refusal, denial). The text is sent to the
	// client as it is, so it must never carry a secret.
	//
	// call.ID is "mcp-", eight characters of this server's own and the
	// call's number: unique across runs, so the audit records of one call
	// pair up in a log many runs append to.
	//
	// ctx carries the call's progress hook (see [contract.Progress]) and
	// the question channel [Ask] uses; it is cancelled when the client
	// cancels the call or the server shuts down.
	Call(ctx context.Context, name string, call contract.Call) (text string, isError bool)
}

// ResultRoster is a [Roster] whose calls return the tool's whole result:
// beside its text, the content blocks, structured content and _meta the
// tool gave ([contract.Result]), which the server sends the client as they
// are, for a failure too. The server calls CallResult instead of Call.
type ResultRoster interface {
	Roster
	// CallResult is [Roster.Call] with the whole result; res.Text is what
	// a client gets when res has no content blocks.
	CallResult(ctx context.Context, name string, call contract.Call) (res contract.Result, isError bool)
}

// TitledRoster is a [Roster] that also has a human title for some of its
// tools. The server sends a title when Title returns a non-empty string.
type TitledRoster interface {
	Roster
	// Title returns the tool's human title, or "" for none.
	Title(tool string) string
}

// ChangingRoster is a [Roster] that says when its tools change, as a
// basis runtime does: while serving ([Server.Serve],
// [Server.ListenAndServe]), the server then refreshes its list
// (and tells clients) on its own.
type ChangingRoster interface {
	Roster
	// Changed returns a channel that is closed when the tools next
	// change. The server takes it before reading Tools, so a change
	// between the two is never missed.
	Changed() <-chan struct{}
}

// defaultAnswerTimeout is how long a call waits, between two round trips,
// for the client to come back with its user's answer to an approval
// question before the question counts as unanswered (and the call is
// denied).
const defaultAnswerTimeout = 10 * time.Minute

// ServerOptions configures a [Server]. The zero value is usable.
type ServerOptions struct {
	// Name and Version identify the server to clients; empty means "basis"
	// and the main module's version ("devel" when the binary does not
	// know it).
	Name, Version string
	// Logger receives a record per call and one for each tool that cannot
	// be served, each message a line a person reads. Nil: no logs. On
	// stdio its output must not be stdout, which carries the protocol.
	Logger *slog.Logger
	// AnswerTimeout bounds the wait for an answer to an approval question
	// between round trips, after which the call is denied; zero means ten
	// minutes.
	AnswerTimeout time.Duration
	// Surfaces, when set, serves resources, resource templates, prompts
	// and completions beside the tools ([GatewaySurfaces] for a
	// runtime's MCP servers).
	Surfaces Surfaces
	// Observer, when set, is told of every request the server answers
	// (tracing: otelbasis's Observer), and a call runs under the context
	// it returns.
	Observer RequestObserver
}

// Server serves a [Roster] as an MCP server, over stdio ([Server.Serve]
// with [mcp.StdioTransport]) or streamable HTTP ([Server.ListenAndServe]).
// Every call goes to [Roster.Call]; every result is a tool result, with
// isError set for failures and refusals, never a protocol error, so the
// model reads what went wrong and can correct itself.
//
// Calls run concurrently, from one client or many; the server does not
// serialise them (the roster does, for tools that are not Parallel), and
// a slow call never holds up tools/list.
type Server struct {
	roster Roster
	mcp    *mcp.Server
	opts   ServerOptions
	regMu  sync.Mutex
	served atomic.Pointer[map[string]servedTool]
	// changed is a ChangingRoster's channel, taken by the last Refresh;
	// refreshed is closed (and replaced) by every Refresh, so a watcher
	// waits on the new channel. Both under regMu.
	changed   <-chan struct{}
	refreshed chan struct{}
	slots     slots
	levels    logLevels
	base      context.Context
	stopAll   context.CancelFunc
	calls     sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*pendingCall // by request state, while a call is in flight
	conts   continuations           // reads and gets waiting for their client's answers
	closing bool                    // no new call starts; guards calls.Add against calls.Wait
	seq     atomic.Uint64
	// runID tells this server's call ids from those of every other run
	// writing to the same audit log: a start record with no end, left by
	// a run that died, is never paired with another run's end.
	runID string
}

// NewServer returns a server for r. It reads r.Tools() once now; call
// [Server.Refresh] when the roster changes.
func NewServer(r Roster, opts *ServerOptions) *Server {
	s := &Server{roster: r, pending: map[string]*pendingCall{}, runID: strings.ToLower(rand.Text()[:8])}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Name == "" {
		s.opts.Name = "basis"
	}
	if s.opts.Version == "" {
		s.opts.Version = "devel"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
			s.opts.Version = info.Main.Version
		}
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if s.opts.AnswerTimeout <= 0 {
		s.opts.AnswerTimeout = defaultAnswerTimeout
	}
	s.base, s.stopAll = context.WithCancel(context.Background())
	mcpOpts := &mcp.ServerOptions{
		// Advertise tools (and list_changed) even while the roster is
		// empty: a later Refresh may add some.
		// Logging: a tool's server's log messages reach the client.
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 (SEP-2577) but works through its deprecation window, and a gateway passes on what servers log (issue 22)
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	}
	s.surfaceOptions(mcpOpts)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}, mcpOpts)
	s.mcp.AddReceivingMiddleware(s.unknownTools, s.setLevel)
	if s.opts.Surfaces != nil {
		s.mcp.AddReceivingMiddleware(s.surfaceMethods)
	}
	if s.opts.Observer != nil {
		// Added last, so the outermost: it sees every answer, those of
		// the middleware above too.
		s.mcp.AddReceivingMiddleware(s.observing)
	}
	empty := map[string]servedTool{}
	s.served.Store(&empty)
	s.refreshed = make(chan struct{})
	s.Refresh()
	return s
}

// Refresh reads the roster's tools again and brings the served list up to
// date: tools gone are removed, new and changed ones are (re)added, and
// clients are sent notifications/tools/list_changed when anything
// differs. Calls in flight are not disturbed. A host calls it when its
// roster changed in a way a [ChangingRoster]'s channel does not say,
// such as a roster replaced whole.
func (s *Server) Refresh() { s.refresh(false) }

// refresh is [Server.Refresh]; with announce, clients are sent
// notifications/tools/list_changed even when the served list came out
// the same: a [ChangingRoster] said its tools changed, as when an
// upstream server announced its list changed, and a gateway passes that
// on rather than judge it (a server may re-add a tool as it was).
func (s *Server) refresh(announce bool) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if cr, ok := s.roster.(ChangingRoster); ok {
		s.changed = cr.Changed()
	}
	close(s.refreshed)
	s.refreshed = make(chan struct{})
	old := *s.served.Load()
	next := make(map[string]servedTool)
	differs := false
	var some *mcp.Tool // a served tool, to announce the list by
	for _, d := range s.roster.Tools() {
		t, err := s.toolFor(d)
		if err != nil {
			s.logf("tool %s is not served: %v", printableToolName(d.Name), err)
			continue
		}
		wire, err := json.Marshal(t)
		if err != nil {
			s.logf("tool %s is not served: %v", printableToolName(d.Name), err)
			continue
		}
		next[d.Name] = servedTool{wire: wire, parallel: d.Parallel}
		some = t
		if !bytes.Equal(old[d.Name].wire, wire) {
			s.mcp.AddTool(t, s.callTool)
			differs = true
		}
	}
	var gone []string
	for name := range old {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
		differs = true
	}
	if announce && !differs && some != nil {
		// The SDK sends list_changed when a tool is added, also as it
		// was: adding one again announces the list unchanged.
		s.mcp.AddTool(some, s.callTool)
	}
	s.served.Store(&next)
}

// servedTool is a tool as it was sent, for change detection, and whether
// it may run beside another call of its client.
type servedTool struct {
	wire     []byte
	parallel bool
}

// watch refreshes the served list whenever a [ChangingRoster]'s tools
// change, until ctx is done.
func (s *Server) watch(ctx context.Context) {
	if _, ok := s.roster.(ChangingRoster); !ok {
		return
	}
	for {
		s.regMu.Lock()
		changed, refreshed := s.changed, s.refreshed
		s.regMu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-changed:
			s.refresh(true)
		case <-refreshed:
			// Someone else refreshed: wait on the channel it took.
		}
	}
}

// serving reports whether a tool of that name is served now.
func (s *Server) serving(name string) bool {
	_, ok := (*s.served.Load())[name]
	return ok
}

// slots holds, per client, the one slot a call of a tool that is not
// Parallel holds while it runs.
type slots struct {
	mu sync.Mutex
	m  map[Client]*slot
}

// slot is one client's slot and how many calls hold or wait for it, so
// the entry goes when the client has none.
type slot struct {
	ch    chan struct{}
	users int
}

// take waits for client's slot; release must be called once the call
// is done, ok or not.
func (sl *slots) take(ctx context.Context, client Client) (release func(), err error) {
	sl.mu.Lock()
	if sl.m == nil {
		sl.m = map[Client]*slot{}
	}
	s := sl.m[client]
	if s == nil {
		s = &slot{ch: make(chan struct{}, 1)}
		sl.m[client] = s
	}
	s.users++
	sl.mu.Unlock()
	leave := func() {
		sl.mu.Lock()
		defer sl.mu.Unlock()
		if s.users--; s.users == 0 {
			delete(sl.m, client)
		}
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// toolFor converts a descriptor to the MCP tool sent to clients.
func (s *Server) toolFor(d contract.Descriptor) (*mcp.Tool, error) {
	schema := d.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var top map[string]any
	if err := json.Unmarshal(schema, &top); err != nil || top["type"] != "object" {
		return nil, fmt.Errorf("its input schema is not a JSON Schema object of type \"object\"")
	}
	t := &mcp.Tool{
		Name:        d.Name,
		Description: d.Description,
		InputSchema: json.RawMessage(schema),
		Annotations: annotations(d.SideEffect),
	}
	if tr, ok := s.roster.(TitledRoster); ok {
		if title := tr.Title(d.Name); title != "" {
			t.Title = title
			t.Annotations.Title = title
		}
	}
	return t, nil
}

// annotations returns the MCP tool annotations for a tool whose strongest
// side effect is se: readOnlyHint for none; destructiveHint for process and
// external; openWorldHint for external. Every hint is stated, since MCP's
// defaults (destructive, open world) would otherwise claim more than the
// tool does.
func annotations(se contract.SideEffect) *mcp.ToolAnnotations {
	destructive := se == contract.SideEffectProcess || se == contract.SideEffectExternal
	openWorld := se >= contract.SideEffectExternal
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    se == contract.SideEffectNone,
		DestructiveHint: &destructive,
		OpenWorldHint:   &openWorld,
	}
}

// unknownTools answers a call of a tool the server does not list with a
// tool result rather than the SDK's protocol error, so the model reads the
// roster's refusal (which names close matches) and its turn goes on.
func (s *Server) unknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil || s.serving(call.Params.Name) {
			return next(ctx, method, req)
		}
		// This path is outside the SDK's input-request handling, so the
		// call may not ask its user anything: [Ask] says so and the
		// approver denies.
		pc := s.newPending(ctx, call, false)
		res, err := s.start(ctx, pc, call)
		return completed(call.Session, res), err
	}
}

// callTool is the SDK handler of every served tool.
func (s *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params.RequestState != "" {
		return s.resume(ctx, req)
	}
	return s.start(ctx, s.newPending(ctx, req, true), req)
}

// pendingCall is one call in flight. Its pipeline runs on a goroutine of
// its own, under a context derived from the server's (not the request's),
// because on protocol 2026-07-28 an approval question ends the request and
// the answer comes in a second one: the pipeline waits in [Ask] across
// the two.
type pendingCall struct {
	id     string // the request state a retry echoes; unguessable
	seq    uint64
	name   string
	input  json.RawMessage
	origin *mcp.ServerSession
	// sessionless is set when the call came over HTTP without a session
	// (protocol 2026-07-28), so origin is the request's alone: it is the
	// client's label ([Client]).
	sessionless string
	canAsk      bool
	ctx         context.Context
	cancel      context.CancelFunc
	asks        chan *question // from Ask to the attached handler
	done        chan struct{}
	text        string
	res         contract.Result // a ResultRoster's result; its Text is text
	isError     bool
	asked       atomic.Int32
	progN       atomic.Int64
	askMu       sync.Mutex // one question at a time
	// slot is the client's slot the call holds (a tool that is not
	// Parallel), which it lets go while basis's approval question or a
	// server's input requests wait for the client; only the call's
	// pipeline goroutine touches it.
	slot *heldSlot
	srv  *Server
	// passCaps returns the capabilities the client declared with the
	// call, when it passes a server's input requests through: decoded at
	// the first question, which few calls ask (the decode was a twentieth
	// of a served call in memory, by pprof of BenchmarkServeCall).
	passCaps func() *mcp.ClientCapabilities
	// wire is the server's refusal the client sees as the call's
	// JSON-RPC error (a capability it lacks); set by the pipeline
	// before done is closed.
	wire *jsonrpc.Error

	mu          sync.Mutex
	att         *attachment // the request currently waiting on the call
	outstanding *question   // a question sent to the client and not yet answered
	// round is the part of the request state that names the question
	// outstanding: each question gets a new one, so a retry answers the
	// question it was sent for and no other (SEP-2322: a state changes
	// with every round).
	round string
}

// attachment is the request a pendingCall reports to: where progress
// goes, and whether its client can be asked.
type attachment struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	// canElicit is read when the call asks, which few calls do: decoding
	// the request's capabilities on every call cost a JSON decode each.
	canElicit func() bool
}

type pendingKey struct{}

// Client identifies the client of a served call. Two calls of one client
// have equal Clients, calls of different clients different ones: stdio
// has one client, each HTTP session (protocols up to 2025-11-25) is one,
// and over HTTP without sessions (protocol 2026-07-28) a client is what
// its requests say it is, the name and version of its clientInfo: every
// holder of the bearer token may act for any client anyway, so the label
// only keeps apart the calls of clients that do not pretend to be one
// another. The zero Client is no client. It is comparable, so a roster
// keeps per-client state in a map keyed by it.
type Client struct {
	session *mcp.ServerSession
	// sessionless is, for a client without a session, "sessionless " and
	// its clientInfo's name and version.
	sessionless string
}

// ClientOf returns the client a served call in ctx came from, and false
// outside a call the server is running.
func ClientOf(ctx context.Context) (Client, bool) {
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	if pc == nil || pc.origin == nil {
		return Client{}, false
	}
	return pc.client(), true
}

// client is the call's [Client].
func (pc *pendingCall) client() Client {
	if pc.sessionless != "" {
		return Client{sessionless: pc.sessionless}
	}
	return Client{session: pc.origin}
}

// newPending makes the call req asks for; reqCtx is the request's
// context, whose trace the call continues.
func (s *Server) newPending(reqCtx context.Context, req *mcp.CallToolRequest, canAsk bool) *pendingCall {
	ctx, cancel := context.WithCancel(s.base)
	pc := &pendingCall{
		id:          rand.Text(),
		seq:         s.seq.Add(1),
		name:        req.Params.Name,
		input:       bytes.Clone(req.Params.Arguments),
		origin:      req.Session,
		srv:         s,
		sessionless: sessionlessClient(req),
		canAsk:      canAsk,
		cancel:      cancel,
		asks:        make(chan *question),
		done:        make(chan struct{}),
	}
	ctx = context.WithValue(ctx, pendingKey{}, pc)
	ctx = callTrace(ctx, reqCtx, req.Params.GetMeta())
	ctx = contract.WithProgress(ctx, pc.progress)
	ctx = contract.WithProgressSteps(ctx, pc.step)
	ctx = contract.WithLog(ctx, s.logLevel(req), pc.log)
	pc.ctx = pc.withPass(ctx, req)
	return pc
}

// withClientTrace continues the trace a client sent in the call's _meta
// (traceparent, tracestate: the MCP semantic conventions' carrier), as a
// [contract.TraceContext]: the runtime's observer starts its span under
// it, and without one a declared program still joins the client's trace.
// contract refuses a malformed value.
func withClientTrace(ctx context.Context, meta map[string]any) context.Context {
	parent, _ := meta["traceparent"].(string)
	if parent == "" {
		return ctx
	}
	state, _ := meta["tracestate"].(string)
	return contract.WithTraceContext(ctx, contract.TraceContext{Parent: parent, State: state})
}

// start runs a new call and waits for its result or its first question.
func (s *Server) start(ctx context.Context, pc *pendingCall, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		pc.cancel()
		return errorResult("basis: the server is shutting down; the call was not run"), nil
	}
	s.pending[pc.id] = pc
	s.calls.Add(1)
	s.mu.Unlock()
	pc.attach(ctx, req)
	go s.run(pc)
	return s.wait(ctx, pc, req)
}

// run is the call's pipeline goroutine.
func (s *Server) run(pc *pendingCall) {
	defer s.calls.Done()
	began := time.Now()
	status := "ok"
	func() {
		defer func() {
			// A panic's value is not printed anywhere: it may hold what
			// the roster keeps secret.
			if recover() != nil {
				pc.text, pc.isError = "basis: the call failed inside the server (a panic); nothing ran to completion, and the server is still up", true
				status = "panicked"
			}
		}()
		in := pc.input
		if len(in) == 0 {
			in = json.RawMessage(`{}`)
		}
		if t, ok := (*s.served.Load())[pc.name]; ok && !t.parallel {
			release, err := s.slots.take(pc.ctx, pc.client())
			if err != nil {
				pc.text, pc.isError = fmt.Sprintf("%s was not run: the call was cancelled while it waited for another call of its client to finish", printableToolName(pc.name)), true
				return
			}
			pc.slot = &heldSlot{release: release, take: func() (func(), error) { return s.slots.take(pc.ctx, pc.client()) }}
			defer pc.slot.leave()
		}
		c := contract.Call{ID: "mcp-" + s.runID + "-" + strconv.FormatUint(pc.seq, 10), Input: in}
		if rr, ok := s.roster.(*RuntimeRoster); ok {
			var st runtime.Status
			pc.res, st = rr.callStatus(pc.ctx, pc.name, c)
			pc.text, pc.isError = pc.res.Text, st != runtime.StatusOK
			if st == runtime.StatusRefused {
				status = "refused"
			}
			return
		}
		if rr, ok := s.roster.(ResultRoster); ok {
			pc.res, pc.isError = rr.CallResult(pc.ctx, pc.name, c)
			pc.text = pc.res.Text
			return
		}
		pc.text, pc.isError = s.roster.Call(pc.ctx, pc.name, c)
	}()
	if status == "ok" && pc.isError {
		status = "error"
	}
	if pc.ctx.Err() != nil {
		status += ", cancelled"
	}
	pc.cancel()
	asked := ""
	if n := pc.asked.Load(); n > 0 {
		asked = fmt.Sprintf(", asked the client %d time(s)", n)
	}
	// Logged before done is closed: whoever waits for the call (its
	// request, a session ending, Serve returning) finds its line written.
	s.logf("call %d %s: %s in %s%s", pc.seq, printableToolName(pc.name), status, time.Since(began).Round(time.Millisecond), asked)
	close(pc.done)
	s.mu.Lock()
	delete(s.pending, pc.id)
	s.mu.Unlock()
}

// wait waits on behalf of one request: for the call's result, or for a
// question to send the client as an input request. A request cancelled by
// the client cancels the call.
func (s *Server) wait(ctx context.Context, pc *pendingCall, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	stop := context.AfterFunc(ctx, pc.cancel)
	select {
	case <-pc.done:
		stop()
		pc.detach()
		if pc.wire != nil {
			return nil, pc.wire
		}
		return pc.result(), nil
	case q := <-pc.asks:
		if !stop() {
			// The request is gone and the call is being cancelled;
			// Ask returns with the cancellation.
			<-pc.done
			pc.detach()
			return pc.result(), nil
		}
		pc.mu.Lock()
		q.timer = time.AfterFunc(s.opts.AnswerTimeout, func() {
			q.answer(answer{err: fmt.Errorf("%w within %s", errNoAnswer, s.opts.AnswerTimeout)})
		})
		pc.att, pc.outstanding = nil, q
		pc.round = rand.Text()
		state := pc.id + "." + pc.round
		pc.mu.Unlock()
		pc.asked.Add(1)
		if !newProtocol(req.Session) {
			// On older protocols the SDK asks the client and retries
			// within this same request; when the request ends without
			// that retry (the client failed to answer), the question
			// is over.
			context.AfterFunc(ctx, func() { q.answer(answer{err: fmt.Errorf("%w: the request that asked it ended", errNoAnswer)}) })
		}
		asks := mcp.InputRequestMap{q.key: q.params}
		if q.many != nil {
			asks = q.many
			s.logf("call %d %s: MCP server %q asks the client for %s (round %d)", pc.seq, printableToolName(pc.name), q.server, strings.Join(q.keys, ", "), pc.asked.Load())
		}
		return &mcp.CallToolResult{InputRequests: asks, RequestState: state}, nil
	}
}

// resume handles the retry of a call that asked a question: it hands the
// client's answer to the waiting pipeline and waits again. A request state
// basis did not issue for the question now open (made up, altered, or of
// a round already answered, timed out or cancelled) is refused with a
// JSON-RPC invalid-params error, as SEP-2322 asks of a state that fails
// its check: nothing in it reaches the call.
func (s *Server) resume(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, round, _ := strings.Cut(req.Params.RequestState, ".")
	s.mu.Lock()
	pc := s.pending[id]
	s.mu.Unlock()
	if pc == nil || round == "" {
		return nil, errState
	}
	if !pc.sameClient(req) || pc.name != req.Params.Name || !sameJSON(pc.input, req.Params.Arguments) {
		// Nothing of the retry reaches the call: a state is good for
		// its client, tool and exact arguments only.
		return nil, errRetryDiffers
	}
	pc.mu.Lock()
	q := pc.outstanding
	switch {
	case subtle.ConstantTimeCompare([]byte(round), []byte(pc.round)) != 1:
		pc.mu.Unlock()
		return nil, errState
	case q != nil && pc.att == nil:
		pc.outstanding, pc.round = nil, ""
		q.timer.Stop()
	default:
		q = nil
	}
	pc.mu.Unlock()
	if q == nil {
		return errorResult("basis: the approval question this retry answers is being answered by another request; call the tool again"), nil
	}
	pc.attach(ctx, req)
	raw := req.Params.InputResponses[q.key]
	if q.many != nil {
		q.answer(answer{raws: answersFor(q, req.Params.InputResponses)})
	} else if q.key == questionID {
		// Only basis's own question is read as an approval: the answer
		// to a server's question never is.
		res, _ := raw.(*mcp.ElicitResult)
		q.answer(answer{reply: replyFrom(res)})
	} else {
		q.answer(answer{raw: raw})
	}
	return s.wait(ctx, pc, req)
}

// errState refuses a retry whose request state names no open question.
var errState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "basis: the requestState of this retry names no question basis has open (it was answered already, timed out, was cancelled, or the state was altered); call the tool again without requestState"}

// errRetryDiffers refuses a retry whose state is of a call of another
// client, another tool or other arguments.
var errRetryDiffers = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "basis: this retry's client, tool or arguments differ from the call its requestState belongs to; nothing was run. Call the tool again without requestState"}

func (pc *pendingCall) attach(ctx context.Context, req *mcp.CallToolRequest) {
	a := &attachment{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken(), canElicit: cannot}
	if pc.canAsk {
		a.canElicit = sync.OnceValue(func() bool { return canElicit(req.ClientCapabilities()) })
	}
	pc.mu.Lock()
	pc.att = a
	pc.mu.Unlock()
}

// cannot is the canElicit of a request whose call may not ask.
func cannot() bool { return false }

func (pc *pendingCall) detach() {
	pc.mu.Lock()
	pc.att = nil
	pc.mu.Unlock()
}

func (pc *pendingCall) attached() *attachment {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.att
}

func (pc *pendingCall) result() *mcp.CallToolResult {
	if r := contentResult(pc.res, pc.isError); r != nil {
		return r
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pc.text}}, IsError: pc.isError}
}

// progress is the call's progress hook: a line becomes a progress
// notification when the waiting request carries a progress token. It is
// sent in the request's context, so an HTTP client gets it on that
// request's stream.
func (pc *pendingCall) progress(line string) {
	a := pc.attached()
	if a == nil || a.token == nil || a.session == nil {
		return
	}
	n := pc.progN.Add(1)
	_ = a.session.NotifyProgress(a.ctx, &mcp.ProgressNotificationParams{ProgressToken: a.token, Message: line, Progress: float64(n)})
}

// shutdown cancels every call in flight (and every question waiting for
// an answer) and waits for their pipelines to end, so their audit records
// are written.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.stopAll()
	s.calls.Wait()
}

// cancelSession cancels the calls a session started and waits for them.
func (s *Server) cancelSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	calls := make([]*pendingCall, 0, len(s.pending))
	for pc := range maps.Values(s.pending) {
		if pc.origin == ss {
			calls = append(calls, pc)
		}
	}
	s.mu.Unlock()
	for _, pc := range calls {
		pc.cancel()
	}
	for _, pc := range calls {
		<-pc.done
	}
}

// Serve serves one client over t (for stdio, &mcp.StdioTransport{}) until
// the client disconnects or ctx is done. Either way the calls that client
// started are cancelled and Serve returns once their pipelines have ended.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, s.observedTransport(t), nil)
	if err != nil {
		return fmt.Errorf("mcpserve: serve: connecting the transport: %w", err)
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go s.watch(watchCtx)
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		s.cancelSession(ss)
		ss.Close()
		<-ended
		return nil
	case err = <-ended:
		s.cancelSession(ss)
		return err
	}
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// logf logs one line; the Logger's handler serialises concurrent ones.
func (s *Server) logf(format string, args ...any) {
	s.opts.Logger.Info(fmt.Sprintf(format, args...))
}

// printableToolName renders a tool name from the client for a log line: as it
// is when valid, quoted and shortened otherwise.
func printableToolName(name string) string {
	if contract.ValidName(name) {
		return name
	}
	if len(name) > contract.MaxNameLen {
		name = name[:contract.MaxNameLen] + "…"
	}
	return strconv.Quote(name)
}

// sameJSON reports whether two argument objects are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, errA := contract.CanonicalInput(a)
	cb, errB := contract.CanonicalInput(b)
	return errA == nil && errB == nil && bytes.Equal(ca, cb)
}

// newProtocol reports whether the session speaks protocol 2026-07-28 or
// later, where a question ends the request and the answer comes in a
// retry. The SDK assumes the newest version when it does not know.
func newProtocol(ss *mcp.ServerSession) bool {
	v := "9999"
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ProtocolVersion != "" {
			v = p.ProtocolVersion
		}
	}
	return v >= "2026-07-28"
}
