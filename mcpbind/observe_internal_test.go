//go:build unix

package mcpbind

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// bodyID reads the top-level id of one JSON-RPC message, in the
// conventions' string form, and nothing nested.
func TestBodyID(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"number", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, "7"},
		{"string", `{"jsonrpc":"2.0","id":"ab-1","method":"x"}`, "ab-1"},
		{"after params", `{"method":"x","params":{"id":99,"a":[1,{"id":2}]},"id":3}`, "3"},
		{"nested only", `{"method":"x","params":{"id":99}}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, ""},
		{"null", `{"id":null}`, ""},
		{"object id", `{"id":{"x":1}}`, ""},
		{"batch", `[{"id":1}]`, ""},
		{"not JSON", `id=1`, ""},
		{"empty", ``, ""},
		{"truncated", `{"method":"x","params":{`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodyID(strings.NewReader(tt.body)); got != tt.want {
				t.Errorf("bodyID(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

// onlyReader hides a reader's other methods, so http.NewRequest sets no
// GetBody.
type onlyReader struct{ io.Reader }

// An observed POST's id is written down and the server still receives
// the whole body, whether or not the request can give its body again; an
// unobserved request is passed on as it is, its body unread.
func TestPostID(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x"}}`
	tests := []struct {
		name     string
		observed bool
		getBody  bool
		method   string
		want     string
	}{
		{"observed", true, true, http.MethodPost, "12"},
		{"observed, no GetBody", true, false, http.MethodPost, "12"},
		{"not observed", false, true, http.MethodPost, ""},
		{"not observed, no GetBody", false, false, http.MethodPost, ""},
		{"not a POST", true, true, http.MethodDelete, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rid := &requestID{}
			if tt.observed {
				ctx = context.WithValue(ctx, requestIDKey{}, rid)
			}
			var r io.Reader = strings.NewReader(body)
			if !tt.getBody {
				r = onlyReader{r}
			}
			req, err := http.NewRequestWithContext(ctx, tt.method, "http://x/", r)
			if err != nil {
				t.Fatal(err)
			}
			if (req.GetBody != nil) != tt.getBody {
				t.Fatalf("GetBody set %v, want %v", req.GetBody != nil, tt.getBody)
			}
			out := postID(req)
			if got := rid.get(); got != tt.want {
				t.Errorf("id %q, want %q", got, tt.want)
			}
			if !tt.observed && out != req {
				t.Error("an unobserved request was replaced")
			}
			got, err := io.ReadAll(out.Body)
			if err != nil || string(got) != body {
				t.Errorf("the body sent is %q (%v), want %q", got, err, body)
			}
		})
	}
}

// The first id a request is sent under stays: a multi-round-trip retry
// is the same request.
func TestRequestIDFirstStays(t *testing.T) {
	r := &requestID{}
	for _, id := range []string{"", "3", "4"} {
		r.set(id)
	}
	if got := r.get(); got != "3" {
		t.Errorf("id %q, want 3", got)
	}
}
