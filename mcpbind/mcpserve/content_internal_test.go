//go:build unix

package mcpserve

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkResult is contentResult's general way, through the SDK's decoder:
// what the text-only way must match.
func sdkResult(t *testing.T, res contract.Result, isError bool) *mcp.CallToolResult {
	t.Helper()
	b, err := json.Marshal(struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError,omitempty"`
	}{res.Content, isError})
	if err != nil {
		t.Fatal(err)
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// A result of text blocks alone reaches the client as the SDK's decoder
// would have made it; any other block takes the SDK's way.
func TestContentResultOfText(t *testing.T) {
	tests := []struct {
		name    string
		blocks  []string
		isError bool
	}{
		{"one block", []string{`{"type":"text","text":"hello"}`}, false},
		{"escapes and unicode", []string{`{"text":"a\u0000<&>\"é😀\n","type":"text"}`}, true},
		{"several", []string{`{"type":"text","text":""}`, `{"type":"text","text":"two"}`}, false},
		{"annotated", []string{`{"type":"text","text":"x","annotations":{"priority":1}}`}, false},
		{"_meta", []string{`{"type":"text","text":"x","_meta":{"k":"v"}}`}, false},
		{"image", []string{`{"type":"text","text":"x"}`, `{"type":"image","data":"AAAA","mimeType":"image/png"}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := contract.Result{Text: "x"}
			for _, b := range tt.blocks {
				res.Content = append(res.Content, json.RawMessage(b))
			}
			got, err := json.Marshal(contentResult(res, tt.isError))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(sdkResult(t, res, tt.isError))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("result (-SDK's +got):\n%s", diff)
			}
		})
	}
}

// A text result is made without the SDK's decoder, whose 32 KiB buffer
// per result was most of what a proxied call allocated.
func TestContentResultOfTextAllocatesLittle(t *testing.T) {
	res := contract.Result{Text: "hello", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"hello"}`)}}
	const calls = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		if contentResult(res, false) == nil {
			t.Fatal("no result")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per >= 8<<10 {
		t.Errorf("a text result allocated %d bytes; want under 8 KiB", per)
	}
}
