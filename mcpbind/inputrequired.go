//go:build unix

package mcpbind

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/basis-go/basis/contract"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InputPass passes a server's input requests (SEP-2322, 2026-07-28) on
// to the client a call is made for, within the call ([WithInputPass]).
type InputPass struct {
	Capabilities json.RawMessage      // what the client declared
	Responses    mcp.InputResponseMap // answers sent before asked
	// State is the requestState a read or get ([Surface]) continues from.
	State string
	// Refused, when set, is told of the server's -32021 (missing client
	// capabilities), the client's to see as it is; the call fails too.
	Refused func(err *jsonrpc.Error)
	// Ask returns the client's answers, under the server's keys; an
	// error ends the call.
	Ask func(ctx context.Context, server string, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error)
}

type inputPassKey struct{}

// WithInputPass returns ctx carrying p for the calls made in it.
func WithInputPass(ctx context.Context, p *InputPass) context.Context {
	return context.WithValue(ctx, inputPassKey{}, p)
}

func inputPassOf(ctx context.Context) *InputPass {
	p, _ := ctx.Value(inputPassKey{}).(*InputPass)
	return p
}

// modernVersion is the protocol of a call that passes input requests
// through.
const modernVersion = "2026-07-28"

// maxInputRounds bounds the rounds of one call: a server that asks
// forever ends the call instead of holding it.
const maxInputRounds = 32

// modern returns the server's 2026-07-28 session, opened on first need
// beside the session every other request uses (which speaks the
// forwarding protocol, where a server asks by requests of its own). nil
// without error means the server does not speak 2026-07-28; that is
// remembered until the server restarts.
func (s *server) modern(ctx context.Context, main *conn) (*conn, error) {
	s.modernMu.Lock()
	defer s.modernMu.Unlock()
	s.mu.Lock()
	c, no := s.modernConn, s.modernNo
	s.mu.Unlock()
	if no == main {
		return nil, nil
	}
	if c != nil && !c.ended() {
		return c, nil
	}
	if c != nil {
		_ = c.close()
	}
	ctx, cancel := context.WithTimeout(ctx, s.startupTimeout())
	defer cancel()
	c = &conn{launch: main.launch, ready: make(chan struct{}), done: make(chan struct{})}
	clientOpts := &mcp.ClientOptions{
		Logger:         s.m.opts.Logger,
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// A stdio server runs a second process for this session, whose
		// state may differ from the first's: when a call here changes
		// its tools, they are read from here.
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { go s.refresh(c) },
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
	s.noticing(clientOpts)
	client := mcp.NewClient(&mcp.Implementation{Name: "basis", Version: "0.1.0"}, clientOpts)
	s.observing(client)
	c.acks.hearing(client)
	session, err := connect(ctx, c, client, s.transport(c, main.launch), &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		close(c.done)
		if c.stdio != nil {
			c.stdio.kill()
		}
		return nil, &ServerError{Server: s.cfg.Name, Op: "start", Stderr: c.stderr(500 * time.Millisecond),
			Err: &problem{kind: ErrStart, cause: err, text: "a second session on protocol " + modernVersion + " (to pass the server's questions through) could not be opened: " + main.launch.redact(err.Error())}}
	}
	c.session = session
	close(c.ready)
	go func() {
		_ = session.Wait()
		close(c.done)
	}()
	if res := session.InitializeResult(); res == nil || res.ProtocolVersion < modernVersion {
		_ = c.close()
		s.mu.Lock()
		s.modernNo = main
		s.mu.Unlock()
		return nil, nil
	}
	s.mu.Lock()
	s.modernConn = c
	s.mu.Unlock()
	// What clients subscribe to, this process is subscribed to as well:
	// a call here may change it. Published first, so a subscription
	// taken meanwhile reaches it too ([Manager.Subscribe]).
	s.resubscribe(ctx, c)
	return c, nil
}

// modernOpen is the 2026-07-28 session, when one is open.
func (s *server) modernOpen() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.modernConn; c != nil && !c.ended() {
		return c
	}
	return nil
}

// closeModern ends the 2026-07-28 session, if one is open.
func (s *server) closeModern() {
	s.mu.Lock()
	c := s.modernConn
	s.modernConn, s.modernNo = nil, nil
	s.mu.Unlock()
	if c != nil {
		_ = c.close()
	}
}

// errTooManyRounds: the server asked more rounds than one call may take.
var errTooManyRounds = errors.New("the server asked for input more than " + strconv.Itoa(maxInputRounds) + " times in one call; basis ended the call")

// passRounds makes a call (tools/call, prompts/get or resources/read, by
// round) on c, handing every input-required result to p.Ask and
// retrying with the answers and the server's requestState, until the
// server completes. round makes one request with the given answers and
// state and reports what the server asked, if anything, and its new
// state.
func (s *server) passRounds(ctx context.Context, p *InputPass, round func(meta mcp.Meta, resp mcp.InputResponseMap, state string) (mcp.InputRequestMap, string, error)) error {
	caps := p.Capabilities
	if len(caps) == 0 || !json.Valid(caps) {
		caps = json.RawMessage(`{}`)
	}
	resp, state := p.Responses, ""
	for n := 0; ; n++ {
		meta := mcp.Meta{mcp.MetaKeyClientCapabilities: caps}
		reqs, next, err := round(meta, resp, state)
		var wire *jsonrpc.Error
		if p.Refused != nil && errors.As(err, &wire) && wire.Code == mcp.CodeMissingRequiredClientCapabilities {
			p.Refused(wire)
		}
		if err != nil || reqs == nil {
			return err
		}
		if n >= maxInputRounds {
			return &passRefused{errTooManyRounds}
		}
		contract.ReportInputRound(ctx, contract.InputRound{Asker: s.cfg.Name, Keys: slices.Sorted(maps.Keys(reqs))})
		answers, err := p.Ask(ctx, s.cfg.Name, reqs)
		if err != nil {
			return &passRefused{err}
		}
		resp, state = answers, next
	}
}

// passRefused is why a call passing input requests through ended on
// basis's side (the client could not be asked, or did not answer, or the
// server asked too often), as opposed to the server's failing.
type passRefused struct{ err error }

func (e *passRefused) Error() string { return e.err.Error() }
func (e *passRefused) Unwrap() error { return e.err }

// passSurface makes a read or get carrying p on the server's 2026-07-28
// session: one round, with p's answers and state. It reports whether it
// went there (false: the server does not speak 2026-07-28).
func (s *Surface) passSurface(ctx, callCtx context.Context, p *InputPass, op string, in surfaceInput) (bool, error) {
	mc, err := s.srv.modern(ctx, s.conn)
	if err != nil || mc == nil {
		return false, err
	}
	caps := p.Capabilities
	if len(caps) == 0 || !json.Valid(caps) {
		caps = json.RawMessage(`{}`)
	}
	meta := mcp.Meta{mcp.MetaKeyClientCapabilities: caps}
	if s.method == methodReadResource {
		res, err := mc.session.ReadResource(callCtx, &mcp.ReadResourceParams{Meta: meta, URI: in.URI, InputResponses: p.Responses, RequestState: p.State})
		if err != nil {
			return true, s.srv.callError(ctx, callCtx, mc, op, err)
		}
		s.asks, s.askState, s.read = res.InputRequests, res.RequestState, res
		return true, nil
	}
	res, err := mc.session.GetPrompt(callCtx, &mcp.GetPromptParams{Meta: meta, Name: in.Name, Arguments: in.Arguments, InputResponses: p.Responses, RequestState: p.State})
	if err != nil {
		return true, s.srv.callError(ctx, callCtx, mc, op, err)
	}
	s.asks, s.askState, s.prompt = res.InputRequests, res.RequestState, res
	return true, nil
}

// InputRequired is what the server asked instead of answering (with an
// [InputPass]) and its requestState; nil when it answered.
func (s *Surface) InputRequired() (mcp.InputRequestMap, string) { return s.asks, s.askState }
