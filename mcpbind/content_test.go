//go:build unix

package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
)

// A tool's content reaches the contract.Result as the server sent it:
// every kind of block, structured content and _meta, for a result and for
// an isError result (kept in the *contract.ResultError).
func TestContentPassesThrough(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, stdioServer("ts"))
	mixed := tool(t, m, "ts", "mixed")
	for _, isError := range []bool{false, true} {
		want := testserver.MixedResult(isError, "")
		var blocks []json.RawMessage
		for _, c := range want.Content {
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, b)
		}
		input := `{}`
		if isError {
			input = `{"Error":true}`
		}
		res, err := mixed.Execute(context.Background(), contract.Call{ID: "1", Input: json.RawMessage(input)})
		if isError {
			re, ok := errors.AsType[*contract.ResultError](err)
			if !ok {
				t.Fatalf("isError result: error %v is not a *contract.ResultError", err)
			}
			if _, ok := errors.AsType[*mcpbind.ServerError](err); !ok {
				t.Errorf("isError result: error %v no longer names the server", err)
			}
			res = re.Result
		} else if err != nil {
			t.Fatal(err)
		}
		got := map[string]any{"content": res.Content, "structured": res.Structured, "meta": res.Meta}
		wantMap := map[string]any{"content": blocks, "structured": json.RawMessage(`{"n":2,"value":""}`), "meta": json.RawMessage(`{"example.com/trace":"t-"}`)}
		if diff := cmp.Diff(wantMap, got, cmp.Transformer("json", func(b json.RawMessage) any {
			var v any
			_ = json.Unmarshal(b, &v)
			return v
		})); diff != "" {
			t.Errorf("isError %v: content (-want +got):\n%s", isError, diff)
		}
		if res.Text == "" {
			t.Errorf("isError %v: no Text for a plain reader", isError)
		}
	}
}
