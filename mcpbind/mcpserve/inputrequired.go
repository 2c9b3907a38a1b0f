//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28, but servers may use it during the deprecation window, and a gateway passes on what they ask (issue 22)

package mcpserve

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call of a client on protocol 2026-07-28 passes its server's input
// requests through (SEP-2322): the call's context carries an
// [mcpbind.InputPass] whose Ask is [pendingCall.passAsk]. The server's
// requests reach the client under the server's own keys and methods in an
// input-required result whose requestState is basis's (the call's id and
// a round that changes every round), never the server's: the server's
// state stays with the call, on the pipeline goroutine that waits in Ask,
// with the tool, its exact arguments and the gate's decision. A retry is
// checked as every retry is ([Server.resume]: the state names an open
// round of a call of this client, tool and arguments, else -32602 and
// nothing reaches the server), and only the answers to the server's keys
// go on to it.

// reservedKey reports whether an input request key is basis's own: its
// approval question's key, and every key that begins with "basis" in
// any case. A server's key there is refused: its question could pass for
// basis's, or the client's answer to basis's be handed to the server.
func reservedKey(key string) bool {
	return key == questionID || strings.HasPrefix(strings.ToLower(key), "basis")
}

// withPass returns the call's context carrying its [mcpbind.InputPass]
// when its client speaks 2026-07-28 and can be asked; ctx otherwise
// (an older client gets the server's own requests, forwarded by
// [Forward]).
func (pc *pendingCall) withPass(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if !pc.canAsk || !newProtocol(req.Session) {
		return ctx
	}
	var first mcp.InputResponseMap
	for k, v := range req.Params.InputResponses {
		if !reservedKey(k) {
			if first == nil {
				first = mcp.InputResponseMap{}
			}
			first[k] = v
		}
	}
	// The capabilities as the client wrote them: the SDK's parsed form
	// would declare roots to the server when the client did not.
	caps, _ := json.Marshal(req.Params.Meta[mcp.MetaKeyClientCapabilities])
	pc.passCaps = sync.OnceValue(req.ClientCapabilities)
	return mcpbind.WithInputPass(ctx, &mcpbind.InputPass{
		Capabilities: caps,
		Responses:    first,
		Ask:          pc.passAsk,
		Refused:      func(err *jsonrpc.Error) { pc.wire = err },
	})
}

// passAsk is the call's [mcpbind.InputPass] Ask: it sends the server's
// input requests to the client as one round and returns the answers to
// the server's keys.
func (pc *pendingCall) passAsk(ctx context.Context, server string, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	var caps *mcp.ClientCapabilities
	if pc.passCaps != nil { // set with the pass this Ask belongs to
		caps = pc.passCaps()
	}
	keys := slices.Sorted(maps.Keys(reqs))
	out := make(mcp.InputRequestMap, len(reqs))
	// What the client did not declare it is not asked: basis answers
	// for it as a client that cannot ask its user does.
	own := mcp.InputResponseMap{}
	for _, k := range keys {
		if reservedKey(k) {
			return nil, fmt.Errorf("MCP server %q asked the client under the key %s, which basis keeps for its own questions (keys beginning with \"basis\"); basis passed nothing on. The server must use other keys", display.Escape(server), strconv.Quote(display.Escape(k)))
		}
		switch declared(caps, reqs[k]) {
		case answerDecline:
			own[k] = &mcp.ElicitResult{Action: "decline"}
		case answerNoRoots:
			own[k] = &mcp.ListRootsResult{Roots: []*mcp.Root{}}
		case answerFail:
			return nil, fmt.Errorf("MCP server %q asked the client for %s, which the client did not declare it can answer; basis ended the call", display.Escape(server), strconv.Quote(display.Escape(k)))
		default:
			out[k] = namedRequest(server, reqs[k])
		}
	}
	if len(out) == 0 {
		return own, nil
	}
	pc.askMu.Lock()
	defer pc.askMu.Unlock()
	if pc.attached() == nil {
		return nil, errCannotAnswer
	}
	pc.srv.boundRounds(pc)
	// Nothing of the call runs on the server while the client answers
	// (the server's round is over), so the client's other calls may:
	// a client that never comes back holds up none of them.
	if err := pc.slot.away(); err != nil {
		return nil, err
	}
	defer pc.slot.back()
	a, err := pc.ask(ctx, &question{many: out, server: server, keys: keys, reply: make(chan answer, 1)})
	if err != nil {
		return nil, err
	}
	if err := pc.slot.back(); err != nil {
		return nil, fmt.Errorf("the call was cancelled while it waited for another call of its client to finish: %w", err)
	}
	maps.Copy(own, a.raws)
	return own, nil
}

// How basis answers a request the client did not declare it can answer.
const (
	answerAsk     = iota // the client declared it: ask the client
	answerDecline        // an elicitation: declined
	answerNoRoots        // roots: none
	answerFail           // sampling, or what basis does not know: the call ends
)

// declared says how a request of a server is answered for a client with
// caps.
func declared(caps *mcp.ClientCapabilities, r mcp.InputRequest) int {
	switch p := r.(type) {
	case *mcp.ElicitParams:
		if caps != nil && caps.Elicitation != nil && (p.Mode != "url" && canElicit(caps) || p.Mode == "url" && caps.Elicitation.URL != nil) {
			return answerAsk
		}
		return answerDecline
	case *mcp.ListRootsParams:
		if caps != nil && caps.RootsV2 != nil {
			return answerAsk
		}
		return answerNoRoots
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		if caps != nil && caps.Sampling != nil {
			return answerAsk
		}
	}
	return answerFail
}

// heldSlot is a client's slot a call holds, and how to take it again.
type heldSlot struct {
	release func()
	take    func() (func(), error)
	out     bool
}

// away lets the slot go until back; nil holds none.
func (h *heldSlot) away() error {
	if h != nil && !h.out {
		h.release()
		h.out = true
	}
	return nil
}

// back takes the slot again after away.
func (h *heldSlot) back() error {
	if h == nil || !h.out {
		return nil
	}
	release, err := h.take()
	if err != nil {
		return err
	}
	h.release, h.out = release, false
	return nil
}

// leave lets the slot go for good.
func (h *heldSlot) leave() {
	if h != nil && !h.out {
		h.release()
		h.out = true
	}
}

// boundRounds ends the oldest of the client's calls waiting for answers
// to a server's questions when it has maxContinuations of them, so a
// client that never answers holds bounded memory.
func (s *Server) boundRounds(pc *pendingCall) {
	client := pc.client()
	var waiting []*pendingCall
	s.mu.Lock()
	for _, o := range s.pending {
		if o == pc || o.client() != client {
			continue
		}
		o.mu.Lock()
		q := o.outstanding
		o.mu.Unlock()
		if q != nil && q.many != nil {
			waiting = append(waiting, o)
		}
	}
	s.mu.Unlock()
	if len(waiting) < maxContinuations {
		return
	}
	slices.SortFunc(waiting, func(a, b *pendingCall) int { return cmp.Compare(a.seq, b.seq) })
	for _, o := range waiting[:len(waiting)-maxContinuations+1] {
		o.cancel()
	}
}

// answersFor keeps of a retry's answers those to the keys the round
// asked.
func answersFor(q *question, got mcp.InputResponseMap) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for k := range q.many {
		if v, ok := got[k]; ok {
			out[k] = v
		}
	}
	return out
}

// sameClient reports whether a retry comes from the client that made the
// call: the same session, or for a sessionless client the same label.
func (pc *pendingCall) sameClient(req *mcp.CallToolRequest) bool {
	if pc.sessionless != "" {
		return sessionlessClient(req) == pc.sessionless
	}
	return req.Session == pc.origin
}

// A read or get (prompts/get, resources/read) passes input requests
// through round by round: each round is a request of its own, gated and
// audited as every read or get is, and the server's state waits between
// two rounds in the server's continuations, under a state of basis's
// that is good once, for the client, method, name or URI and arguments
// of the request that asked.

// maxContinuations bounds the rounds one client may leave open; the
// oldest goes when a new one would pass it.
const maxContinuations = 64

// continuation is a read or get waiting for its client's answers.
type continuation struct {
	client   Client
	method   string
	target   json.RawMessage // the request's name or URI and arguments, canonical
	upstream string          // the server's requestState
	keys     mcp.InputRequestMap
	expires  time.Time
}

// continuations are the rounds of reads and gets waiting for answers, by
// basis's state.
type continuations struct {
	mu sync.Mutex
	m  map[string]*continuation
}

// put keeps c until it is taken or expires, and returns its state.
func (cs *continuations) put(c *continuation) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]*continuation{}
	}
	now := time.Now()
	var oldest string
	n := 0
	for k, o := range cs.m {
		switch {
		case now.After(o.expires):
			delete(cs.m, k)
		case o.client == c.client:
			n++
			if oldest == "" || o.expires.Before(cs.m[oldest].expires) {
				oldest = k
			}
		}
	}
	if n >= maxContinuations {
		delete(cs.m, oldest)
	}
	state := rand.Text()
	cs.m[state] = c
	return state
}

// take removes and returns the continuation state names, when it is the
// same client's, method's and target's and has not expired; nil else.
func (cs *continuations) take(state string, client Client, method string, target json.RawMessage) *continuation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[state]
	if c == nil || time.Now().After(c.expires) {
		delete(cs.m, state)
		return nil
	}
	if c.client != client || c.method != method || !bytes.Equal(c.target, target) {
		return nil
	}
	delete(cs.m, state)
	return c
}

// surfaceClient is the [Client] of a read or get.
func surfaceClient[P mcp.Params](req *mcp.ServerRequest[P]) Client {
	if l := sessionlessClient(req); l != "" {
		return Client{sessionless: l}
	}
	return Client{session: req.Session}
}

// surfacePass prepares a read or get of a 2026-07-28 client: ctx carries
// its [mcpbind.InputPass], with the answers and the server's state of
// the round it continues, if any. A state that names no round of this
// client, method and target is refused with -32602 before anything
// runs.
func (s *Server) surfacePass(ctx context.Context, ss *mcp.ServerSession, client Client, method string, what map[string]any, meta mcp.Meta, resp mcp.InputResponseMap, state string) (context.Context, error) {
	if !newProtocol(ss) {
		return ctx, nil
	}
	target, err := contract.CanonicalJSON(what)
	if err != nil {
		return nil, errSurfaceState
	}
	caps, _ := json.Marshal(meta[mcp.MetaKeyClientCapabilities])
	pass := &mcpbind.InputPass{Capabilities: caps}
	if state != "" {
		c := s.conts.take(state, client, method, target)
		if c == nil {
			return nil, errSurfaceState
		}
		pass.State = c.upstream
		pass.Responses = answersFor(&question{many: c.keys}, resp)
	} else {
		for k, v := range resp {
			if !reservedKey(k) {
				if pass.Responses == nil {
					pass.Responses = mcp.InputResponseMap{}
				}
				pass.Responses[k] = v
			}
		}
	}
	return mcpbind.WithInputPass(ctx, pass), nil
}

// errSurfaceState refuses a read or get whose requestState names no round
// basis keeps for it.
var errSurfaceState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "basis: the requestState of this request names no round basis keeps for this client and request (it was used, expired, altered, or is another request's); send the request again without requestState"}

// surfaceAsks is what the server of a read or get asked, as the client
// gets it, or an error naming the server when it asked under a key of
// basis's.
func surfaceAsks(server string, reqs mcp.InputRequestMap) (mcp.InputRequestMap, error) {
	out := make(mcp.InputRequestMap, len(reqs))
	for k, r := range reqs {
		if reservedKey(k) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("MCP server %q asked the client under the key %s, which basis keeps for its own questions (keys beginning with \"basis\"); basis passed nothing on. The server must use other keys", display.Escape(server), strconv.Quote(display.Escape(k)))}
		}
		out[k] = namedRequest(server, r)
	}
	return out, nil
}

// inputRequired is res as a 2026-07-28 client gets it when it asks for
// input: "resultType": "input_required", which the SDK writes only into
// the results of its own handlers.
func inputRequired(res mcp.Result) mcp.Result { return typedResult{res, "input_required"} }

// continueLater keeps the server's state of a read or get that asked,
// until the client's retry, and returns the state the client gets.
func (s *Server) continueLater(client Client, method string, what map[string]any, asks mcp.InputRequestMap, upstream string) string {
	target, _ := contract.CanonicalJSON(what)
	s.logf("%s: an MCP server asks the client for %s", method, strings.Join(slices.Sorted(maps.Keys(asks)), ", "))
	return s.conts.put(&continuation{client: client, method: method, target: target, upstream: upstream, keys: asks,
		expires: time.Now().Add(s.opts.AnswerTimeout)})
}

// namedRequest is a server's input request as its client gets it: the
// server named in its _meta ([MetaServer]), and a form's texts set off
// as the server's ([serverForm]); keys, methods and the values an answer
// must match are left as they are.
func namedRequest(server string, r mcp.InputRequest) mcp.InputRequest {
	switch p := r.(type) {
	case *mcp.ElicitParams:
		return serverForm(server, p)
	case *mcp.CreateMessageWithToolsParams:
		q := *p
		q.Meta = withServer(p.Meta, server)
		return &q
	case *mcp.CreateMessageParams:
		q := *p
		q.Meta = withServer(p.Meta, server)
		return &q
	case *mcp.ListRootsParams:
		q := *p
		q.Meta = withServer(p.Meta, server)
		return &q
	}
	return r
}
