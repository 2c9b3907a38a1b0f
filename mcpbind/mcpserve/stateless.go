package mcpserve

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernVersion is the first protocol revision without sessions
// (2026-07-28): each request stands alone, carrying the protocol version
// and the client's capabilities in its _meta and the
// MCP-Protocol-Version header, and input requests replace the server's
// own requests to the client.
const modernVersion = "2026-07-28"

// sessionless reports whether an HTTP request is for the sessionless
// handler: it carries no session id, and says (in the
// MCP-Protocol-Version header, or in its _meta) that it speaks 2026-07-28
// or later. server/discover, which a client of any revision may send to
// learn what the server speaks, goes there too. Everything else is for
// the SDK's stateful handler, which speaks the revisions up to 2025-11-25
// and answers a sessionless request with -32022.
func sessionless(r *http.Request, body []byte) bool {
	if r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	if r.Header.Get("Mcp-Protocol-Version") >= modernVersion {
		return true
	}
	if body == nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	if msg.Method == "server/discover" {
		return true
	}
	v, _ := msg.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= modernVersion
}

// sessionlessClient returns, for a call that came over HTTP without a
// session (it has HTTP headers, and its session, made for this request
// alone, has no id), the label of its client ([Client]); "" for any
// other call.
func sessionlessClient[P mcp.Params](req *mcp.ServerRequest[P]) string {
	if req.Extra == nil || req.Extra.Header == nil || req.Session == nil || req.Session.ID() != "" {
		return ""
	}
	label := "sessionless"
	// The SDK has checked the request's _meta and keeps what it read as
	// the request's session's initialize parameters; ClientInfo would
	// decode the _meta again, a JSON round trip on every call.
	var info *mcp.Implementation
	if p := req.Session.InitializeParams(); p != nil && p.ProtocolVersion >= modernVersion {
		info = p.ClientInfo
	} else {
		info = req.ClientInfo()
	}
	if info != nil {
		label += " " + strconv.Quote(info.Name) + " " + strconv.Quote(info.Version)
	}
	return label
}

// completed is res as a client of ss gets it from a handler of basis's
// own that answers before the SDK's (an unlisted tool's refusal, a
// resource read, a prompt get): on 2026-07-28 every such result says
// "resultType": "complete", which the SDK writes only into the results
// of its own handlers.
func completed(ss *mcp.ServerSession, res mcp.Result) mcp.Result {
	if res == nil || !newProtocol(ss) {
		return res
	}
	return typedResult{res, "complete"}
}

// typedResult is a result whose JSON carries "resultType": kind unless
// it says otherwise already. It embeds the result, so the SDK still
// reaches its _meta (to name the server in it).
type typedResult struct {
	mcp.Result
	kind string
}

// MarshalJSON implements [json.Marshaler].
func (r typedResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	if _, ok := fields["resultType"]; !ok {
		fields["resultType"], _ = json.Marshal(r.kind)
	}
	return json.Marshal(fields)
}

// listCache is the caching hint of the lists basis aggregates from its
// servers (resources, templates, prompts): "private", since what a server
// lists may be its user's own (their repositories, their files), and
// stale at once, since a server may change it at any time.
var listCache = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}
