//go:build unix

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28, but servers may use it during the deprecation window, and a gateway forwards what they ask (issue 22)

package testserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadmeURI is a resource every Surfaces server lists, so two servers
// have the same URI.
const ReadmeURI = "file:///README.md"

// subscribed gets "label uri" for every subscription a Surfaces server
// in this process takes.
var subscribed = make(chan string, 16)

// Subscriptions returns the channel of "label uri" lines, one for each
// subscription a Surfaces server in this process took.
func Subscriptions() <-chan string { return subscribed }

func surfaceOptions(so *mcp.ServerOptions, label string) {
	so.CompletionHandler = func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		ref := req.Params.Ref.Name + req.Params.Ref.URI
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{label + ":" + ref + ":" + req.Params.Argument.Value}}}, nil
	}
	so.SubscribeHandler = func(_ context.Context, req *mcp.SubscribeRequest) error {
		subscribed <- label + " " + req.Params.URI
		return nil
	}
	so.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

func addSurfaces(s *mcp.Server, label string) {
	text := func(uri, t string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: t}}}
	}
	s.AddResource(&mcp.Resource{URI: ReadmeURI, Name: "readme", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return text(req.Params.URI, "readme of "+label), nil
	})
	s.AddResource(&mcp.Resource{URI: "mem://" + label + "/only", Name: "only", MIMEType: "application/octet-stream"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "notes://" + label + "/{id}", Name: "note"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return text(req.Params.URI, "note "+strings.TrimPrefix(req.Params.URI, "notes://"+label+"/")+" of "+label), nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Description: "Summarises a topic.", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: label, Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "summarize " + req.Params.Arguments["topic"] + " (" + label + ")"}},
				{Role: "user", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}}},
			}}, nil
		})
	addInputRequired(s)
	object := json.RawMessage(`{"type":"object"}`)
	// ask elicits a form whose message is the call's "message" argument
	// (as an input request, which the SDK turns into elicitation/create
	// for older clients) and answers with what the client said.
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Asks the user through elicitation.", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult); ok {
			b, _ := json.Marshal(r)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		}
		var in struct{ Message, Mode, URL string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		p := &mcp.ElicitParams{Mode: "form", Message: in.Message, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"name": map[string]any{"type": "string", "title": in.Message, "default": "x"}}}}
		if in.Mode == "url" {
			p = &mcp.ElicitParams{Mode: "url", Message: in.Message, URL: in.URL, ElicitationID: "e1"}
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": p}, RequestState: "asked"}, nil
	})
	// askdirect asks as a server written for protocols before
	// 2026-07-28 does: by a request of its own during the call.
	s.AddTool(&mcp.Tool{Name: "askdirect", Description: "Asks the user through elicitation/create.", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Message string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: in.Message, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit failed: " + err.Error()}}}, nil
		}
		b, _ := json.Marshal(res)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
	// askenums asks with SEP-1330's enum forms, as go-sdk's
	// everything-server writes them.
	s.AddTool(&mcp.Tool{Name: "askenums", Description: "Asks the user to choose.", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "enums", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": []map[string]any{{"const": "value1", "title": "First"}}},
			"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1"}, "enumNames": []string{"Option One"}},
			"untitledMulti":  map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "enum": []string{"option1"}}},
			"titledMulti":    map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "anyOf": []map[string]any{{"const": "value1", "title": "First"}}}},
		}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit failed: " + err.Error()}}}, nil
		}
		b, _ := json.Marshal(res)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
	// change changes what the server serves, as "what" says: "prompts"
	// adds the prompt added, "resources" the resource mem://LABEL/added;
	// "updated" says the resource "uri" was updated.
	s.AddTool(&mcp.Tool{Name: "change", Description: "Changes the server's prompts or resources.", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ What, URI string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		switch in.What {
		case "prompts":
			s.AddPrompt(&mcp.Prompt{Name: "added"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "added"}}}}, nil
			})
		case "resources":
			s.AddResource(&mcp.Resource{URI: "mem://" + label + "/added", Name: "added"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return text(req.Params.URI, "added"), nil
			})
		case "updated":
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "changed " + in.What}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "sample", Description: "Asks the client's model through sampling.", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["m"].(*mcp.CreateMessageWithToolsResult); ok {
			var t *mcp.TextContent
			if len(r.Content) > 0 {
				t, _ = r.Content[0].(*mcp.TextContent)
			}
			if t == nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling gave no text"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "model said " + t.Text}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"m": &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + label}}}}}, RequestState: "asked"}, nil
	})
}
