//go:build unix

package runtime

import "encoding/json"

// AnthropicTool is a tool definition in the Anthropic Messages API format.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// OpenAITool is a function tool definition in the OpenAI Chat Completions
// format.
type OpenAITool struct {
	Type     string         `json:"type"` // always "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of an [OpenAITool].
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// AnthropicTools returns the roster as Anthropic tool definitions, in
// registration order, for hosts that drive their own model loop.
func (rt *Runtime) AnthropicTools() []AnthropicTool {
	tools := rt.roster.Load().tools
	out := make([]AnthropicTool, len(tools))
	for i, r := range tools {
		out[i] = AnthropicTool{Name: r.desc.Name, Description: r.desc.Description, InputSchema: r.desc.InputSchema}
	}
	return out
}

// OpenAITools returns the roster as OpenAI function tools, in registration
// order.
func (rt *Runtime) OpenAITools() []OpenAITool {
	tools := rt.roster.Load().tools
	out := make([]OpenAITool, len(tools))
	for i, r := range tools {
		out[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: r.desc.Name, Description: r.desc.Description, Parameters: r.desc.InputSchema}}
	}
	return out
}
