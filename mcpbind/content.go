//go:build unix

package mcpbind

import (
	"encoding/json"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultOf turns a server's tool result into a [contract.Result]: Text is
// the summary a plain reader reads ([resultText]); Content, Structured and
// Meta are the result as the server sent it, for a host that passes it on
// to an MCP client. Secrets are cut out of everything that is text (text
// blocks, an embedded resource's text, structured content, _meta); image,
// audio and blob data pass as they came.
func resultOf(res *mcp.CallToolResult, l *launch) contract.Result {
	out := contract.Result{Text: l.redact(resultText(res))}
	for _, c := range res.Content {
		b, err := json.Marshal(redactContent(c, l))
		if err != nil {
			continue
		}
		out.Content = append(out.Content, b)
	}
	out.Structured = redactJSON(res.StructuredContent, l)
	// Keys under the protocol's own prefix describe the hop from the
	// server to basis (its serverInfo, the protocol version), not the
	// result: the next hop has its own.
	meta := map[string]any{}
	for k, v := range res.Meta {
		if !strings.HasPrefix(k, protocolMetaPrefix) {
			meta[k] = v
		}
	}
	if len(meta) > 0 {
		out.Meta = redactJSON(meta, l)
	}
	return out
}

// protocolMetaPrefix begins the _meta keys MCP reserves for itself.
const protocolMetaPrefix = "io.modelcontextprotocol/"

// redactContent returns c with secrets cut out of its text.
func redactContent(c mcp.Content, l *launch) mcp.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		cp := *c
		cp.Text = l.redact(c.Text)
		return &cp
	case *mcp.EmbeddedResource:
		if c.Resource == nil || c.Resource.Text == "" {
			return c
		}
		cp, res := *c, *c.Resource
		res.Text = l.redact(res.Text)
		cp.Resource = &res
		return &cp
	}
	return c
}

// redactJSON marshals v and cuts secrets out of it, in the form a JSON
// string spells them too. Nil when v is nil, or when cutting a secret
// left something that is not JSON (the secret spanned the syntax): that
// part is dropped rather than shown.
func redactJSON(v any, l *launch) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	if l == nil {
		return b
	}
	text := string(b)
	for _, s := range l.secrets {
		quoted, _ := json.Marshal(s)
		escaped := strings.Trim(string(quoted), `"`)
		text = strings.ReplaceAll(text, escaped, redacted)
		if escaped != s {
			text = strings.ReplaceAll(text, s, redacted)
		}
	}
	if !json.Valid([]byte(text)) {
		return nil
	}
	return json.RawMessage(text)
}
