//go:build unix

package mcpbind_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/signin"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

const (
	oauthAccess  = "at-canary-31c4"
	oauthRefresh = "rt-canary-8d0f"
	oauthSecret  = "cs-canary-aa17"
)

// guarded is an authorization server and the MCP server it guards (at
// /mcp, streamable, and /sse): metadata, dynamic registration, an
// authorize endpoint that approves at once, PKCE, scopes; tool "admin"
// needs scope admin (a step-up).
type guarded struct {
	*httptest.Server
	mu          sync.Mutex
	codes       map[string][2]string // code -> PKCE challenge, scopes
	tokens      map[string][]string  // access token -> scopes
	scopesAsked []string             // each authorize request's scope
	clientIDs   []string             // each authorize request's client_id
	cimd        bool                 // Client ID Metadata Documents are accepted
	issued      int
	echoSecret  bool // the token endpoint refuses, quoting the client's secret
}

func newGuarded(t *testing.T) *guarded {
	t.Helper()
	g := &guarded{codes: map[string][2]string{}, tokens: map[string][]string{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	for _, name := range []string{"hello", "admin"} {
		mcp.AddTool(server, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil, nil
		})
	}
	get := func(*http.Request) *mcp.Server { return server }
	streamable, sse := mcp.NewStreamableHTTPHandler(get, nil), mcp.NewSSEHandler(get, nil)
	guard := func(next http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			g.mu.Lock()
			scopes, ok := g.tokens[tok]
			g.mu.Unlock()
			challenge := `Bearer resource_metadata="` + g.URL + `/.well-known/oauth-protected-resource` + r.URL.Path + `"`
			if !ok {
				w.Header().Set("WWW-Authenticate", challenge+`, scope="tools"`)
				http.Error(w, "sign in", http.StatusUnauthorized)
				return
			}
			if r.Body != nil {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"name":"admin"`)) && !slices.Contains(scopes, "admin") {
					w.Header().Set("WWW-Authenticate", challenge+`, error="insufficient_scope", scope="admin"`)
					http.Error(w, "more scopes", http.StatusForbidden)
					return
				}
			}
			next.ServeHTTP(w, r)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard(streamable))
	mux.Handle("/sse", guard(sse))
	for _, p := range []string{"/mcp", "/sse"} {
		mux.HandleFunc("/.well-known/oauth-protected-resource"+p, func(w http.ResponseWriter, r *http.Request) {
			writeJSONTo(w, &oauthex.ProtectedResourceMetadata{Resource: g.URL + p, AuthorizationServers: []string{g.URL}})
		})
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		cimd := g.cimd
		g.mu.Unlock()
		writeJSONTo(w, &oauthex.AuthServerMeta{Issuer: g.URL, AuthorizationEndpoint: g.URL + "/authorize", TokenEndpoint: g.URL + "/token",
			RegistrationEndpoint: g.URL + "/register", CodeChallengeMethodsSupported: []string{"S256"}, ResponseTypesSupported: []string{"code"},
			TokenEndpointAuthMethodsSupported: []string{"client_secret_post", "none"}, ClientIDMetadataDocumentSupported: cimd})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSONTo(w, &oauthex.ClientRegistrationResponse{ClientID: "dyn"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		g.mu.Lock()
		g.issued++
		code := fmt.Sprint("code-", g.issued)
		g.codes[code] = [2]string{q.Get("code_challenge"), q.Get("scope")}
		g.scopesAsked = append(g.scopesAsked, q.Get("scope"))
		g.clientIDs = append(g.clientIDs, q.Get("client_id"))
		g.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.echoSecret {
			w.WriteHeader(http.StatusBadRequest)
			writeJSONTo(w, map[string]string{"error": "invalid_client", "error_description": "bad secret " + r.Form.Get("client_secret")})
			return
		}
		c, ok := g.codes[r.Form.Get("code")]
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c[0] {
			w.WriteHeader(http.StatusBadRequest)
			writeJSONTo(w, map[string]string{"error": "invalid_grant"})
			return
		}
		g.issued++
		access := fmt.Sprint(oauthAccess, "-", g.issued)
		g.tokens[access] = strings.Fields(c[1])
		writeJSONTo(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": oauthRefresh, "scope": c[1]})
	})
	g.Server = httptest.NewServer(mux)
	t.Cleanup(g.Close)
	return g
}

func writeJSONTo(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// approve is a ManagerOptions.SignIn hook whose browser follows the authorization URL
// to its redirect and hands back the code, as an operator who approves.
func approve(_ context.Context, _ string) (*signin.Flow, error) {
	const redirect = "http://127.0.0.1:1/callback"
	return &signin.Flow{RedirectURL: redirect, Fetch: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(args.URL)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			return nil, err
		}
		return &auth.AuthorizationResult{Code: back.Query().Get("code"), State: back.Query().Get("state")}, nil
	}}, nil
}

func TestSignInWithoutAHookSaysRunLogin(t *testing.T) {
	g := newGuarded(t)
	m := newManager(t, nil, mcpbind.ServerConfig{Name: "remote", Type: mcpbind.TypeHTTP, URL: g.URL + "/mcp"})
	_, err := m.ServerTools(context.Background(), "remote")
	var sie *mcpbind.SignInError
	if !errors.As(err, &sie) {
		t.Fatalf("error %v is no SignInError", err)
	}
	if diff := cmp.Diff("run: basis mcp login remote", sie.Error()); diff != "" || sie.Server != "remote" {
		t.Errorf("SignInError (-want +got):\n%s (server %q)", diff, sie.Server)
	}
}

// TestSignInOverBothTransports signs in, stores the token, and a new
// Manager uses it without signing in again; for streamable HTTP and SSE.
func TestSignInOverBothTransports(t *testing.T) {
	for _, tc := range []struct{ typ, path string }{{mcpbind.TypeHTTP, "/mcp"}, {mcpbind.TypeSSE, "/sse"}} {
		t.Run(tc.typ, func(t *testing.T) {
			g := newGuarded(t)
			store := signin.NewFileStore(filepath.Join(t.TempDir(), mcpbind.TokensDirName))
			server := mcpbind.ServerConfig{Name: "remote", Type: tc.typ, URL: g.URL + tc.path}
			m := newManager(t, &mcpbind.ManagerOptions{Tokens: store, SignIn: approve}, server)
			res, err := call(t, tool(t, m, "remote", "hello"), `{}`)
			if err != nil || res.Text != "hello done" {
				t.Fatalf("call: %q, %v", res.Text, err)
			}
			m.Close()
			// A later run: no sign-in possible, the stored token serves.
			m2 := newManager(t, &mcpbind.ManagerOptions{Tokens: store}, server)
			if res, err := call(t, tool(t, m2, "remote", "hello"), `{}`); err != nil || res.Text != "hello done" {
				t.Fatalf("call with the stored token: %q, %v", res.Text, err)
			}
			if state, err := m2.SignInState(context.Background(), "remote"); state != signin.SignedIn || err != nil {
				t.Errorf("SignInState = %q, %v", state, err)
			}
			if err := m2.Logout(context.Background(), "remote"); err != nil {
				t.Fatal(err)
			}
			if tok, err := store.Load(context.Background(), g.URL+tc.path); tok != nil || err != nil {
				t.Errorf("after Logout the store holds %v, %v", tok, err)
			}
		})
	}
}

// TestSignInThroughLoopback: the loopback flow `basis mcp login` runs,
// as a host gets it from package signin, against go-sdk's client and an
// authorization server, with a browser that follows the redirects.
func TestSignInThroughLoopback(t *testing.T) {
	g := newGuarded(t)
	follow := func(u string) error {
		resp, err := http.Get(u) // to /authorize, then the loopback /callback
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the callback answered %s", resp.Status)
		}
		return nil
	}
	var notified []bool
	hook := func(ctx context.Context, server string) (*signin.Flow, error) {
		return signin.Loopback(ctx, server, &signin.LoopbackOptions{Open: follow, Notify: func(_ string, opened bool) { notified = append(notified, opened) }})
	}
	store := signin.NewFileStore(filepath.Join(t.TempDir(), mcpbind.TokensDirName))
	m := newManager(t, &mcpbind.ManagerOptions{Tokens: store, SignIn: hook},
		mcpbind.ServerConfig{Name: "remote", Type: mcpbind.TypeHTTP, URL: g.URL + "/mcp"})
	asked, err := m.Login(context.Background(), "remote")
	if err != nil || !asked {
		t.Fatalf("Login = %v, %v", asked, err)
	}
	if res, err := call(t, tool(t, m, "remote", "hello"), `{}`); err != nil || res.Text != "hello done" {
		t.Fatalf("call: %q, %v", res.Text, err)
	}
	if diff := cmp.Diff([]bool{true}, notified); diff != "" {
		t.Errorf("notified (-want +got):\n%s", diff)
	}
	if tok, err := store.Load(context.Background(), g.URL+"/mcp"); err != nil || tok == nil || !strings.HasPrefix(tok.AccessToken, oauthAccess) {
		t.Errorf("stored %v, %v", tok, err)
	}
}

// TestSignInClientOfEachKind: the entry's Client ID Metadata Document
// where the authorization server accepts one, its client_id, else dynamic
// registration.
func TestSignInClientOfEachKind(t *testing.T) {
	const doc = "https://basis.example/client.json"
	tests := []struct {
		name  string
		cimd  bool
		oauth *mcpbind.OAuthConfig
		want  string
	}{
		{"metadata document accepted", true, &mcpbind.OAuthConfig{ClientMetadataURL: doc}, doc},
		{"metadata document not accepted", false, &mcpbind.OAuthConfig{ClientMetadataURL: doc}, "dyn"},
		{"pre-registered", false, &mcpbind.OAuthConfig{ClientID: "pre"}, "pre"},
		{"nothing configured", true, nil, "dyn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuarded(t)
			g.cimd = tt.cimd
			m := newManager(t, &mcpbind.ManagerOptions{SignIn: approve},
				mcpbind.ServerConfig{Name: "remote", Type: mcpbind.TypeHTTP, URL: g.URL + "/mcp", OAuth: tt.oauth})
			if _, err := m.ServerTools(context.Background(), "remote"); err != nil {
				t.Fatal(err)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if diff := cmp.Diff([]string{tt.want}, g.clientIDs); diff != "" {
				t.Errorf("client_id (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSignInStepUpKeepsTheScopesGranted: a 403 insufficient_scope signs
// in again for the scope named and those granted before.
func TestSignInStepUpKeepsTheScopesGranted(t *testing.T) {
	g := newGuarded(t)
	m := newManager(t, &mcpbind.ManagerOptions{SignIn: approve},
		mcpbind.ServerConfig{Name: "remote", Type: mcpbind.TypeHTTP, URL: g.URL + "/mcp"})
	if res, err := call(t, tool(t, m, "remote", "admin"), `{}`); err != nil || res.Text != "admin done" {
		t.Fatalf("admin call: %q, %v", res.Text, err)
	}
	// go-sdk unions scopes through a map: compare them as sets.
	var asked [][]string
	for _, s := range g.scopesAsked {
		asked = append(asked, slices.Sorted(slices.Values(strings.Fields(s))))
	}
	if diff := cmp.Diff([][]string{{"tools"}, {"admin", "tools"}}, asked); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
}

// TestSignInCanariesAppearNowhere: tokens and the client secret in no
// print of a Token or config, no log, no error — not even when the
// authorization server quotes the secret back.
func TestSignInCanariesAppearNowhere(t *testing.T) {
	g := newGuarded(t)
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	lookup := func(name string) (string, bool) { return oauthSecret, name == "SECRET" }
	server := mcpbind.ServerConfig{Name: "remote", Type: mcpbind.TypeHTTP, URL: g.URL + "/mcp", Origin: mcpbind.OriginOperator,
		OAuth: &mcpbind.OAuthConfig{ClientID: "pre", ClientSecret: "${SECRET}"}}
	store := signin.NewFileStore(filepath.Join(t.TempDir(), mcpbind.TokensDirName))
	m := newManager(t, &mcpbind.ManagerOptions{Tokens: store, SignIn: approve, Lookup: lookup, Logger: logger}, server)
	if _, err := call(t, tool(t, m, "remote", "hello"), `{}`); err != nil {
		t.Fatal(err)
	}
	tok, err := store.Load(context.Background(), server.URL)
	if err != nil || tok == nil || !strings.HasPrefix(tok.AccessToken, oauthAccess) || tok.ClientSecret != "" && tok.ClientSecret != oauthSecret {
		t.Fatalf("stored %v, %v", tok, err)
	}
	tok.ClientSecret = oauthSecret
	fmt.Fprintf(&out, "%v %+v %#v %s\n", tok, tok, tok, tok)
	fmt.Fprintf(&out, "%v %+v %#v %s\n", server, server, server, server)
	logger.Info("sign-in", "token", tok, "server", server)
	j, _ := json.Marshal(tok)
	out.Write(j)
	fmt.Fprintln(&out, m.Status())

	// An authorization server that quotes the secret in its refusal.
	g.mu.Lock()
	g.echoSecret = true
	g.mu.Unlock()
	if _, err := m.Login(context.Background(), "remote"); err == nil {
		t.Error("a refused sign-in succeeded")
	} else {
		fmt.Fprintf(&out, "%v %+v\n", err, err)
		if !strings.Contains(err.Error(), "bad secret [redacted]") {
			t.Errorf("the refusal is not there, redacted: %v", err)
		}
	}
	fmt.Fprintln(&out, m.Status())
	for _, c := range []string{oauthAccess, oauthRefresh, oauthSecret} {
		if strings.Contains(out.String(), c) {
			t.Errorf("%s appears in:\n%s", c, out.String())
		}
	}
}
