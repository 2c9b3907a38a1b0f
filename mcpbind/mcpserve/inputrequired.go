package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract/display"
	"github.com/basis-go/basis/mcpbind"
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
	return mcpbind.WithInputPass(ctx, &mcpbind.InputPass{
		Capabilities: caps,
		Responses:    first,
		Ask:          pc.passAsk,
	})
}

// passAsk is the call's [mcpbind.InputPass] Ask: it sends the server's
// input requests to the client as one round and returns the answers to
// the server's keys.
func (pc *pendingCall) passAsk(ctx context.Context, server string, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range reqs {
			if !yield(k) {
				return
			}
		}
	})
	out := make(mcp.InputRequestMap, len(reqs))
	for _, k := range keys {
		if reservedKey(k) {
			return nil, fmt.Errorf("MCP server %q asked the client under the key %s, which basis keeps for its own questions (keys beginning with \"basis\"); basis passed nothing on. The server must use other keys", display.Escape(server), strconv.Quote(display.Escape(k)))
		}
		switch p := reqs[k].(type) {
		case *mcp.ElicitParams:
			out[k] = serverForm(server, p)
		default:
			out[k] = p
		}
	}
	pc.askMu.Lock()
	defer pc.askMu.Unlock()
	if pc.attached() == nil {
		return nil, errCannotAnswer
	}
	a, err := pc.ask(ctx, &question{many: out, server: server, keys: keys, reply: make(chan answer, 1)})
	if err != nil {
		return nil, err
	}
	return a.raws, nil
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
