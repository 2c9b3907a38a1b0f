package mcpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzReplyFrom: whatever a client sends back, only an accepted form whose
// decision is exactly allow_once or allow_always allows the call.
func FuzzReplyFrom(f *testing.F) {
	for _, seed := range [][2]string{
		{"accept", "allow_once"}, {"accept", "allow_always"}, {"accept", "deny"},
		{"decline", "allow_once"}, {"cancel", ""}, {"ACCEPT", "allow_once"},
		{"accept", "Allow_Once"}, {"accept", "allow_once "}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, action, decision string) {
		r := replyFrom(&mcp.ElicitResult{Action: action, Content: map[string]any{"decision": decision}})
		allowed := r.Choice != ChoiceDeny
		want := action == "accept" && (decision == "allow_once" || decision == "allow_always")
		if allowed != want {
			t.Fatalf("action %q decision %q: choice %v", action, decision, r.Choice)
		}
		if r.Said == "" {
			t.Fatalf("action %q decision %q: no words for the reason", action, decision)
		}
	})
}

// FuzzRequireBearer: no Authorization header but the exact one passes.
func FuzzRequireBearer(f *testing.F) {
	const token = "fuzz-token-0123456789"
	for _, seed := range []string{"", "Bearer " + token, "bearer " + token, "Bearer " + token + " ", "Bearer  " + token, "Basic " + token, token, "Bearer"} {
		f.Add(seed)
	}
	reached := false
	h := requireBearer(token, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	f.Fuzz(func(t *testing.T, header string) {
		reached = false
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header["Authorization"] = []string{header}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		scheme, rest, _ := strings.Cut(header, " ")
		want := strings.EqualFold(scheme, "Bearer") && rest == token
		if reached != want {
			t.Fatalf("header %q: reached the handler %v, want %v", header, reached, want)
		}
		if !reached && rec.Code != http.StatusUnauthorized {
			t.Fatalf("header %q: status %d, want 401", header, rec.Code)
		}
	})
}
