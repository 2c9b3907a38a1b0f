package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// contentResult is the tool result a client gets for res: its content
// blocks, structured content and _meta as the tool gave them. Nil when
// res has none of them (the text alone is sent), or when they are not
// MCP content the SDK can send, so a tool's odd block never costs the
// client the result's text.
func contentResult(res contract.Result, isError bool) *mcp.CallToolResult {
	if len(res.Content) == 0 && len(res.Structured) == 0 && len(res.Meta) == 0 {
		return nil
	}
	if r := textResult(res, isError); r != nil {
		return r
	}
	content := res.Content
	if len(content) == 0 {
		// A result with structured content only still carries its text,
		// as the spec asks of a tool that returns structured content.
		b, err := json.Marshal(&mcp.TextContent{Text: res.Text})
		if err != nil {
			return nil
		}
		content = []json.RawMessage{b}
	}
	wire := struct {
		Content    []json.RawMessage `json:"content"`
		Structured json.RawMessage   `json:"structuredContent,omitempty"`
		Meta       json.RawMessage   `json:"_meta,omitempty"`
		IsError    bool              `json:"isError,omitempty"`
	}{content, res.Structured, res.Meta, isError}
	b, err := json.Marshal(wire)
	if err != nil {
		return nil
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return &out
}

// textResult is contentResult for the commonest result, text blocks
// alone ({"type":"text","text":…}, nothing else in them) and no
// structured content or _meta, made without the SDK's decoder, which
// costs a 32 KiB buffer per result; nil for any other result.
func textResult(res contract.Result, isError bool) *mcp.CallToolResult {
	if len(res.Content) == 0 || len(res.Structured) != 0 || len(res.Meta) != 0 {
		return nil
	}
	out := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(res.Content)), IsError: isError}
	for _, raw := range res.Content {
		var block map[string]json.RawMessage
		if json.Unmarshal(raw, &block) != nil || len(block) != 2 || string(block["type"]) != `"text"` {
			return nil
		}
		var text string
		if t := block["text"]; len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &text) != nil {
			return nil
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: text})
	}
	return out
}

// CallResult runs one call through the runtime's pipeline and returns
// its whole result ([ResultRoster]): a tool's content, structured content
// and _meta pass on as the tool gave them, for a tool error that came
// with them too; a refusal is its text.
func (r *RuntimeRoster) CallResult(ctx context.Context, name string, call contract.Call) (contract.Result, bool) {
	res, status := r.callStatus(ctx, name, call)
	return res, status != runtime.StatusOK
}

// callStatus is CallResult with how the call ended, for the server's log:
// a refusal is not a tool's error.
func (r *RuntimeRoster) callStatus(ctx context.Context, name string, call contract.Call) (contract.Result, runtime.Status) {
	out := r.rt.Load().Call(contract.WithDelegationDepth(ctx, r.Depth), name, call)
	return contract.Result{Text: out.Text, Truncated: out.Truncated, Content: out.Content, Structured: out.Structured, Meta: out.Meta}, out.Status
}
