//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28, but servers may use it during the deprecation window, and a gateway forwards what they ask (issue 22)

package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/basis-go/basis/contract/display"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forwardID names the input request that carries an upstream server's
// question; basis's own is questionID, and only that one is ever read as
// an approval.
const forwardID = "server_request"

// MetaServer is the _meta key of a forwarded request that names the MCP
// server that made it.
const MetaServer = "basis/server"

// maxServerText bounds each text of a server's question that the user
// reads (the message, a title, a description), in characters.
const maxServerText = 2000

// errCannotAnswer: the client that made the call did not declare what the
// server's request needs (form or URL elicitation, sampling), or the
// call's request cannot carry a question.
var errCannotAnswer = errors.New("the MCP client cannot answer this request (it did not declare the capability)")

// Forward hands a request an upstream MCP server made during a call, an
// elicitation (*mcp.ElicitParams, form or URL mode) or a sampling request
// (*mcp.CreateMessageWithToolsParams), to the client that made the call
// in ctx, and returns the client's answer; it is the
// mcpbind.ServerRequestFunc of a host that serves its runtime. What the
// user reads names the server and cannot pass for basis's own approval
// form: the message opens with "MCP server "NAME" asks", each of the
// server's lines follows behind "│ ", and every text of the server is
// escaped (display.Escape) and cut at 2,000 characters. The request's
// _meta carries the server's name under [MetaServer].
//
// An error means the client cannot be asked (it did not declare the
// capability, or ctx is not a served call's) or did not answer; the
// caller declines.
func Forward(ctx context.Context, server string, req mcp.InputRequest) (mcp.InputResponse, error) {
	var out mcp.InputRequest
	switch p := req.(type) {
	case *mcp.ElicitParams:
		out = serverForm(server, p)
	case *mcp.CreateMessageWithToolsParams:
		q := *p
		q.Meta = withServer(p.Meta, server)
		out = &q
	default:
		return nil, fmt.Errorf("basis does not forward a %T", req)
	}
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	if pc == nil {
		d, _ := ctx.Value(directKey{}).(*direct)
		if d == nil {
			return nil, errNotServing
		}
		if newProtocol(d.session) || !canAnswer(d.session, out) {
			return nil, errCannotAnswer
		}
		switch p := out.(type) {
		case *mcp.ElicitParams:
			return d.session.Elicit(d.ctx, p)
		case *mcp.CreateMessageWithToolsParams:
			return d.session.CreateMessageWithTools(d.ctx, p)
		}
	}
	pc.askMu.Lock()
	defer pc.askMu.Unlock()
	if a := pc.attached(); !pc.canAsk || a == nil || !canAnswer(a.session, out) {
		return nil, errCannotAnswer
	}
	a, err := pc.ask(ctx, &question{key: forwardID, params: out, reply: make(chan answer, 1)})
	if err != nil {
		return nil, err
	}
	if a.raw == nil {
		return nil, errNoAnswer
	}
	return a.raw, nil
}

// canAnswer reports whether the session's client declared what req needs.
func canAnswer(ss *mcp.ServerSession, req mcp.InputRequest) bool {
	if ss == nil || ss.InitializeParams() == nil || ss.InitializeParams().Capabilities == nil {
		return false
	}
	caps := ss.InitializeParams().Capabilities
	switch p := req.(type) {
	case *mcp.ElicitParams:
		if p.Mode == "url" {
			return caps.Elicitation != nil && caps.Elicitation.URL != nil
		}
		return canElicit(sessionCaps(ss))
	case *mcp.CreateMessageWithToolsParams:
		return caps.Sampling != nil
	}
	return false
}

// serverForm is the server's elicitation as the user sees it: the server
// named first, its words quoted behind it, its schema's texts tamed.
// Values the answer must match (property names, enum values, defaults,
// the URL and elicitation id) are left as they are.
func serverForm(server string, p *mcp.ElicitParams) *mcp.ElicitParams {
	q := *p
	q.Meta = withServer(p.Meta, server)
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q asks (its own question, passed on by basis; not basis's approval of a call):", display.Escape(server))
	for line := range strings.SplitSeq(bound(p.Message), "\n") {
		b.WriteString("\n│ ")
		b.WriteString(display.Escape(strings.TrimSuffix(line, "\r")))
	}
	if p.Mode == "url" {
		fmt.Fprintf(&b, "\nIt asks you to open: %s", display.Escape(bound(p.URL)))
	}
	q.Message = b.String()
	q.RequestedSchema = tame(p.RequestedSchema)
	return &q
}

// withServer returns a copy of meta that names the server.
func withServer(meta mcp.Meta, server string) mcp.Meta {
	out := maps.Clone(meta)
	if out == nil {
		out = mcp.Meta{}
	}
	out[MetaServer] = server
	return out
}

// tame copies a requested schema with every text a person reads (title,
// description, enumNames) escaped and bounded.
func tame(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch s, isText := x.(string); {
			case isText && (k == "title" || k == "description"):
				out[k] = display.Escape(bound(s))
			case k == "enumNames":
				out[k] = tameTexts(x)
			default:
				out[k] = tame(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = tame(x)
		}
		return out
	}
	return v
}

func tameTexts(v any) any {
	list, ok := v.([]any)
	if !ok {
		return tame(v)
	}
	out := make([]any, len(list))
	for i, x := range list {
		if s, ok := x.(string); ok {
			out[i] = display.Escape(bound(s))
		} else {
			out[i] = x
		}
	}
	return out
}

// bound cuts s after maxServerText characters, saying how much was cut.
func bound(s string) string {
	if utf8.RuneCountInString(s) <= maxServerText {
		return s
	}
	n := 0
	for i := range s {
		if n == maxServerText {
			return s[:i] + fmt.Sprintf("… (%d more characters cut by basis)", utf8.RuneCountInString(s[i:]))
		}
		n++
	}
	return s
}
