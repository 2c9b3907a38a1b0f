//go:build !nomcp

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Canaries: what the authorization server issues and the pre-registered
// client's secret. None may show anywhere basis writes for people.
const (
	canaryAccess  = "AT-canary-5f1d"
	canaryRefresh = "RT-canary-9c2e"
	canarySecret  = "CS-canary-77ab"
)

// authServer is an authorization server and the MCP server it guards, in
// one httptest server: protected resource metadata, RFC 8414 metadata,
// dynamic registration, an authorize endpoint that redirects at once (the
// operator "approves"), PKCE checked at the token endpoint, refresh.
type authServer struct {
	*httptest.Server
	mu            sync.Mutex
	codes         map[string][2]string // code -> PKCE challenge, scope
	valid         map[string]string    // access tokens the MCP server accepts, and their scope
	stepUp        bool                 // a tools/call needs scope "admin"
	issued        int
	refuseRefresh bool
	refreshes     int
	preClient     bool // token requests must carry client pre-client and its secret
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	a := &authServer{codes: map[string][2]string{}, valid: map[string]string{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "greets a signed-in caller"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, signed-in caller"}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		scope, ok := a.valid[tok]
		stepUp := a.stepUp
		a.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if ok && stepUp && bytes.Contains(body, []byte(`"tools/call"`)) && !strings.Contains(scope, "admin") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.URL+`/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="admin"`)
			http.Error(w, "more scopes", http.StatusForbidden)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, &oauthex.ProtectedResourceMetadata{Resource: a.URL + "/mcp", AuthorizationServers: []string{a.URL}, ScopesSupported: []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, &oauthex.AuthServerMeta{Issuer: a.URL, AuthorizationEndpoint: a.URL + "/authorize", TokenEndpoint: a.URL + "/token",
			RegistrationEndpoint: a.URL + "/register", CodeChallengeMethodsSupported: []string{"S256"},
			ResponseTypesSupported: []string{"code"}, ScopesSupported: []string{"tools", "offline_access"},
			TokenEndpointAuthMethodsSupported: []string{"client_secret_post", "none"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md oauthex.ClientRegistrationMetadata
		_ = json.NewDecoder(r.Body).Decode(&md)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, &oauthex.ClientRegistrationResponse{ClientRegistrationMetadata: md, ClientID: "dyn-client"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") != a.URL+"/mcp" {
			http.Error(w, "PKCE S256 and the resource are required", http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.issued++
		code := fmt.Sprintf("code-%d", a.issued)
		a.codes[code] = [2]string{q.Get("code_challenge"), q.Get("scope")}
		a.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.preClient && (r.Form.Get("client_id") != "pre-client" || r.Form.Get("client_secret") != canarySecret) {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]string{"error": "invalid_client"})
			return
		}
		scope := "tools offline_access"
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			c, ok := a.codes[r.Form.Get("code")]
			delete(a.codes, r.Form.Get("code"))
			scope = c[1]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c[0] {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			a.refreshes++
			if a.refuseRefresh || r.Form.Get("refresh_token") != canaryRefresh {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]string{"error": "invalid_grant"})
				return
			}
		default:
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		a.issued++
		access := fmt.Sprintf("%s-%d", canaryAccess, a.issued)
		a.valid = map[string]string{access: scope} // the older tokens stop working
		writeJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600,
			"refresh_token": canaryRefresh, "scope": scope})
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// oauthSetup is a workspace and an operator config dir naming the guarded
// server "remote".
type oauthSetup struct {
	a       *authServer
	ws, cfg string
	audit   string
	outputs []string // everything basis printed, for the canary check
}

func newOAuthSetup(t *testing.T, oauth string) *oauthSetup {
	t.Helper()
	a := newAuthServer(t)
	s := &oauthSetup{a: a, ws: t.TempDir(), cfg: filepath.Join(t.TempDir(), "config")}
	s.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	// A workspace of its own (.basis/), so basis says nothing of where
	// it took one: the one line is the whole of stderr.
	for _, d := range []string{s.cfg, filepath.Join(s.ws, ".basis")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(s.cfg, "mcp.json"), `{"mcpServers": {"remote": {"url": "`+a.URL+`/mcp", "oauth": `+oauth+`}}}`)
	return s
}

// run runs the built basis; browser is BROWSER ("" none, and no display).
func (s *oauthSetup) run(t *testing.T, browser string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(basisBinary, append([]string{"-C", s.ws}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "BROWSER" && name != "DISPLAY" && name != "WAYLAND_DISPLAY" && name != "BASIS_CONFIG_DIR" {
			env = append(env, kv)
		}
	}
	env = append(env, "BASIS_CONFIG_DIR="+s.cfg, "OAUTH_SECRET="+canarySecret)
	if browser != "" {
		env = append(env, "BROWSER="+browser)
	}
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	s.outputs = append(s.outputs, out.String(), errb.String())
	return out.String(), errb.String(), code
}

// tokenFile is the one file of the store.
func (s *oauthSetup) tokenFile(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.cfg, mcpbind.TokensDirName, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one token file, have %v", files)
	}
	return files[0]
}

// expire sets the stored token's expiry in the past, as time would.
func (s *oauthSetup) expire(t *testing.T) {
	t.Helper()
	path := s.tokenFile(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["expiry"] = "2001-01-01T00:00:00Z"
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// noCanary fails when anything basis printed or audited holds a token
// or the client secret.
func (s *oauthSetup) noCanary(t *testing.T) {
	t.Helper()
	audit, _ := os.ReadFile(s.audit)
	for _, text := range append(s.outputs, string(audit)) {
		for _, c := range []string{canaryAccess, canaryRefresh, canarySecret} {
			if strings.Contains(text, c) {
				t.Errorf("basis showed a credential (%s) in:\n%s", c, text)
			}
		}
	}
}

func (s *oauthSetup) call(t *testing.T, browser string) (string, string, int) {
	return s.run(t, browser, "call", "mcp__remote__hello", "{}", "--approve", "allow", "--audit", s.audit)
}

// TestOAuthFlowEndToEnd signs in, calls, refreshes, loses the refresh,
// signs out, all with the built basis and a browser that follows the
// redirects.
func TestOAuthFlowEndToEnd(t *testing.T) {
	s := newOAuthSetup(t, "{}")
	browser := oauthBrowserBinary

	if out, _, _ := s.run(t, "", "mcp", "list"); !strings.Contains(out, "remote  needs sign-in") {
		t.Errorf("before login, mcp list says:\n%s", out)
	}
	// Without a browser a call needs the one line.
	if _, errOut, code := s.call(t, ""); code != exitFailed || errOut != "run: basis mcp login remote\n" {
		t.Fatalf("a call before sign-in: exit %d, stderr:\n%s", code, errOut)
	}
	out, errOut, code := s.run(t, browser, "mcp", "login", "remote")
	if code != 0 || !strings.Contains(out, "signed in to remote") {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	file := s.tokenFile(t)
	for path, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %o (%v)", path, fi.Mode().Perm(), want, err)
		}
	}
	if out, _, _ := s.run(t, "", "mcp", "list"); !strings.Contains(out, "remote  signed in") {
		t.Errorf("after login, mcp list says:\n%s", out)
	}

	// The stored token serves a later run, which cannot open a browser.
	if out, errOut, code := s.call(t, ""); code != 0 || !strings.Contains(out, "hello, signed-in caller") {
		t.Fatalf("call with the stored token: exit %d\n%s%s", code, out, errOut)
	}

	// An expired token is refreshed, and the new one stored.
	before, _ := os.ReadFile(file)
	s.expire(t)
	if out, errOut, code := s.call(t, ""); code != 0 || !strings.Contains(out, "hello, signed-in caller") {
		t.Fatalf("call after expiry: exit %d\n%s%s", code, out, errOut)
	}
	after, _ := os.ReadFile(file)
	s.a.mu.Lock()
	refreshes := s.a.refreshes
	s.a.mu.Unlock()
	if refreshes != 1 || string(after) == string(before) {
		t.Errorf("after expiry: %d refreshes, token file changed: %v", refreshes, string(after) != string(before))
	}

	// A refused refresh without a browser: the one line.
	s.a.mu.Lock()
	s.a.refuseRefresh = true
	s.a.mu.Unlock()
	s.expire(t)
	if _, errOut, code := s.call(t, ""); code != exitFailed || errOut != "run: basis mcp login remote\n" {
		t.Errorf("refresh refused: exit %d, stderr:\n%s", code, errOut)
	}
	// With a browser, the call signs in by itself.
	if out, errOut, code := s.call(t, browser); code != 0 || !strings.Contains(out, "hello, signed-in caller") {
		t.Errorf("call that signs in by itself: exit %d\n%s%s", code, out, errOut)
	}

	if out, errOut, code := s.run(t, "", "mcp", "logout", "remote"); code != 0 {
		t.Fatalf("logout: exit %d\n%s%s", code, out, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(s.cfg, mcpbind.TokensDirName, "*.json")); len(files) != 0 {
		t.Errorf("logout left %v", files)
	}
	if out, _, _ := s.run(t, "", "mcp", "list"); !strings.Contains(out, "remote  needs sign-in") {
		t.Errorf("after logout, mcp list says:\n%s", out)
	}
	s.noCanary(t)
}

// TestOAuthForgedStateIsRefused: an authorization response whose state is
// not the one basis sent stores nothing.
func TestOAuthForgedStateIsRefused(t *testing.T) {
	s := newOAuthSetup(t, "{}")
	_, errOut, code := s.run(t, oauthBrowserBinary+" -state forged", "mcp", "login", "remote")
	if code == 0 || !strings.Contains(errOut, "does not carry the state basis sent") {
		t.Errorf("forged state: exit %d, stderr:\n%s", code, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(s.cfg, mcpbind.TokensDirName, "*.json")); len(files) != 0 {
		t.Errorf("a refused sign-in stored %v", files)
	}
	s.noCanary(t)
}

// TestOAuthTokenStoreOthersCanReadIsRefused: a token file or directory
// others may read, or a link, is refused with what to do.
func TestOAuthTokenStoreOthersCanReadIsRefused(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, file string)
		want  string
	}{
		{"file readable by others", func(t *testing.T, file string) { os.Chmod(file, 0o644) }, "run: chmod 600"},
		{"directory readable by others", func(t *testing.T, file string) { os.Chmod(filepath.Dir(file), 0o755) }, "run: chmod 700"},
		{"file is a link", func(t *testing.T, file string) {
			other := filepath.Join(t.TempDir(), "elsewhere.json")
			data, _ := os.ReadFile(file)
			os.WriteFile(other, data, 0o600)
			os.Remove(file)
			if err := os.Symlink(other, file); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newOAuthSetup(t, "{}")
			if _, errOut, code := s.run(t, oauthBrowserBinary, "mcp", "login", "remote"); code != 0 {
				t.Fatalf("login: %s", errOut)
			}
			tc.spoil(t, s.tokenFile(t))
			_, errOut, code := s.call(t, "")
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s", code, errOut)
			}
			s.noCanary(t)
		})
	}
}

// TestOAuthPreregisteredClientSecretIsNeverShown: the operator's client
// and its ${VAR} secret reach the token endpoint and nothing else.
func TestOAuthPreregisteredClientSecretIsNeverShown(t *testing.T) {
	s := newOAuthSetup(t, `{"client_id": "pre-client", "client_secret": "${OAUTH_SECRET}", "scopes": ["tools"]}`)
	s.a.mu.Lock()
	s.a.preClient = true
	s.a.mu.Unlock()
	if out, errOut, code := s.run(t, oauthBrowserBinary, "mcp", "login", "remote"); code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := s.call(t, ""); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out, errOut)
	}
	s.run(t, "", "check")
	s.run(t, "", "tools")
	s.run(t, "", "mcp", "list")
	s.noCanary(t)
}

// TestOAuthWorkspaceClientSecretIsRefused: a repository's .mcp.json may
// not name a client secret.
func TestOAuthWorkspaceClientSecretIsRefused(t *testing.T) {
	s := newOAuthSetup(t, "{}")
	write(t, filepath.Join(s.ws, ".mcp.json"), `{"mcpServers": {"repo": {"url": "`+s.a.URL+`/mcp", "oauth": {"client_id": "x", "client_secret": "${OAUTH_SECRET}"}}}}`)
	out, errOut, code := s.run(t, "", "check")
	if code == 0 || !strings.Contains(out+errOut, "may not name a client secret") {
		t.Errorf("check: exit %d, output:\n%s%s", code, out, errOut)
	}
	s.noCanary(t)
}

// TestOAuthStepUpDuringACall: a call the server wants more scopes for
// fails with the one line without a browser, and signs in again with one.
func TestOAuthStepUpDuringACall(t *testing.T) {
	s := newOAuthSetup(t, "{}")
	if _, errOut, code := s.run(t, oauthBrowserBinary, "mcp", "login", "remote"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	s.a.mu.Lock()
	s.a.stepUp = true
	s.a.mu.Unlock()
	if out, errOut, code := s.call(t, ""); code != exitFailed || errOut != "run: basis mcp login remote\n" || out != "" {
		t.Errorf("step-up without a browser: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := s.call(t, oauthBrowserBinary); code != 0 || !strings.Contains(out, "hello, signed-in caller") {
		t.Errorf("step-up with a browser: exit %d\n%s%s", code, out, errOut)
	}
	s.noCanary(t)
}
