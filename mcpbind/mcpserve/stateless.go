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
func sessionlessClient(req *mcp.CallToolRequest) string {
	if req.Extra == nil || req.Extra.Header == nil || req.Session == nil || req.Session.ID() != "" {
		return ""
	}
	label := "sessionless"
	if info := req.ClientInfo(); info != nil {
		label += " " + strconv.Quote(info.Name) + " " + strconv.Quote(info.Version)
	}
	return label
}
