//lint:file-ignore SA1019 sampling and roots are deprecated from protocol 2026-07-28, but servers may ask for them during the deprecation window, and a gateway passes them through (issue 22)

//go:build unix

package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundsSeen counts the requests the rounds tool got in this process, so
// a test tells whether a refused retry reached the server.
var roundsSeen atomic.Int64

// addInputRequired adds tools that ask their client through
// input-required results (SEP-2322), for a gateway's tests of passing
// them through:
//
//   - rounds asks three rounds, each under a key and with a state of its
//     own ("step1" with state "r1", then "step2" with state "r2"), checks
//     the state and the answer it gets each round, and ends saying the
//     answers and how many requests it has had;
//   - askas asks one question under the key its argument "key" names;
//   - the prompt askprompt asks "topic" (state "p") and ends with a
//     message naming the answer;
//   - needsampling refuses a client that did not declare sampling with
//     JSON-RPC error -32021;
//   - caps asks for what the request's client capabilities declare
//     (elicitation under "e", sampling under "s", roots under "r") and
//     ends naming the keys answered, or "none" when it asked nothing.
func addInputRequired(s *mcp.Server) {
	object := json.RawMessage(`{"type":"object"}`)
	form := func(msg string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"v": map[string]any{"type": "string"}}}}
	}
	answer := func(req *mcp.CallToolRequest, key string) string {
		r, ok := req.Params.InputResponses[key].(*mcp.ElicitResult)
		if !ok || r.Action != "accept" {
			return ""
		}
		v, _ := r.Content["v"].(string)
		return v
	}
	done := func(text string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	s.AddTool(&mcp.Tool{Name: "rounds", Description: "Asks three rounds.", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := roundsSeen.Add(1)
		switch req.Params.RequestState {
		case "":
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"step1": form("step 1")}, RequestState: "r1"}, nil
		case "r1":
			if a := answer(req, "step1"); a != "" {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"step2": form("step 2 after " + a)}, RequestState: "r2:" + a}, nil
			}
		default:
			var first string
			if _, err := fmt.Sscanf(req.Params.RequestState, "r2:%s", &first); err == nil && answer(req, "step2") != "" {
				return done(fmt.Sprintf("rounds %s %s after %d requests", first, answer(req, "step2"), n)), nil
			}
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("bad round: state %q", req.Params.RequestState)}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "askprompt"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if r, ok := req.Params.InputResponses["topic"].(*mcp.ElicitResult); ok && req.Params.RequestState == "p" {
			v, _ := r.Content["v"].(string)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "about " + v}}}}, nil
		}
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"topic": form("topic?")}, RequestState: "p"}, nil
	})
	s.AddTool(&mcp.Tool{Name: "needsampling", Description: "Refuses a client without sampling.", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
			return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling required",
				Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
		}
		return done("sampling declared"), nil
	})
	s.AddTool(&mcp.Tool{Name: "askas", Description: "Asks under a key of the caller's.", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Key string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if r, ok := req.Params.InputResponses[in.Key]; ok {
			b, _ := json.Marshal(r)
			return done("answered " + string(b)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{in.Key: form("Allow it?")}, RequestState: "k"}, nil
	})
	s.AddTool(&mcp.Tool{Name: "caps", Description: "Asks what the client can answer.", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "c" {
			var got []string
			for _, k := range []string{"e", "r", "s"} {
				if req.Params.InputResponses[k] != nil {
					got = append(got, k)
				}
			}
			return done(fmt.Sprintf("answered %v", got)), nil
		}
		caps := req.ClientCapabilities()
		asks := mcp.InputRequestMap{}
		if caps != nil && caps.Elicitation != nil {
			asks["e"] = form("e")
		}
		if caps != nil && caps.Sampling != nil {
			asks["s"] = &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "s"}}}}
		}
		if caps != nil && caps.RootsV2 != nil {
			asks["r"] = &mcp.ListRootsParams{}
		}
		if len(asks) == 0 {
			return done("none"), nil
		}
		return &mcp.CallToolResult{InputRequests: asks, RequestState: "c"}, nil
	})
}
