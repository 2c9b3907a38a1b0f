//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind/signin"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuthConfig is a server's "oauth" ({} will do): a ClientID, else the
// Client ID Metadata Document at ClientMetadataURL or dynamic
// registration. ClientSecret is as written (${VAR}), never shown, and not
// in a workspace's file. Scopes are asked for besides a challenge's.
type OAuthConfig struct {
	ClientMetadataURL string
	ClientID          string
	ClientSecret      string
	Scopes            []string
}

// oauthView is an OAuthConfig fit to print.
type oauthView struct {
	ClientMetadataURL string `json:",omitempty"`
	ClientID          string
	ClientSecret      string `json:",omitempty"`
	Scopes            []string
}

func (o *OAuthConfig) view() oauthView {
	v := oauthView{ClientMetadataURL: o.ClientMetadataURL, ClientID: o.ClientID, Scopes: o.Scopes}
	if o.ClientSecret != "" {
		v.ClientSecret = redacted
	}
	return v
}

// oauth reads a server's "oauth" object.
func (p *configParser) oauth(v configfile.Value, server string) *OAuthConfig {
	if v.Kind() != "object" {
		p.report(v.Off, server, "oauth", newProblem(errWrongType, `must be an object such as {"client_id": "..."} or {}, not `+v.KindPhrase()))
		return nil
	}
	o := &OAuthConfig{}
	seen := map[string]bool{}
	for _, m := range v.Members() {
		field := "oauth." + printableName(m.Key)
		if seen[m.Key] {
			p.report(m.KeyOff, server, field, newProblem(errDuplicateKey, "written twice; keep one"))
			continue
		}
		seen[m.Key] = true
		switch m.Key {
		case "client_id":
			if s, ok := p.str(m.Value, server, field); ok && p.template(m.Value.Off, server, field, s) {
				o.ClientID = s
			}
		case "client_secret":
			if p.origin.workspace() {
				// A repository would hand the operator's secret to a
				// server of its choosing, or write its own secret
				// where the operator's belongs.
				p.report(m.Value.Off, server, field, newProblem(errInvalidValue,
					"a workspace's .mcp.json may not name a client secret: put the server, with its client_secret, in your own <config dir>/mcp.json"))
				continue
			}
			if s, ok := p.str(m.Value, server, field); ok && p.template(m.Value.Off, server, field, s) {
				o.ClientSecret = s
			}
		case "scopes":
			o.Scopes = p.patterns(m.Value, server, field)
		case "client_metadata_url":
			if s, ok := p.str(m.Value, server, field); ok {
				if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" || u.User != nil {
					p.report(m.Value.Off, server, field, newProblem(errInvalidValue, "must be an https URL with a path, such as https://example.com/basis-client.json"))
					continue
				}
				o.ClientMetadataURL = s
			}
		}
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		p.report(v.Off, server, "oauth.client_secret", newProblem(errMissingField, "a client secret needs its client_id"))
	}
	return o
}

// SignInError: a server needs sign-in and [ManagerOptions].SignIn is nil.
// A host finds it with [errors.As] to tell the operator to sign in.
type SignInError struct {
	Server string
}

// Error returns the one line: "run: basis mcp login NAME".
func (e *SignInError) Error() string { return "run: basis mcp login " + printableName(e.Server) }

// signIn is one http or sse server's OAuth handler ([auth.OAuthHandler]):
// the stored tokens, and go-sdk's [auth.AuthorizationCodeHandler] for a
// new sign-in. It outlives the server's connections.
type signIn struct {
	m            *Manager
	name         string
	url          string // the server's URL, expanded: what tokens are stored under
	cfg          *OAuthConfig
	clientID     string // cfg's, expanded
	clientSecret string
	redact       func(string) string

	mu         sync.Mutex
	loaded     bool // the store was read
	ts         oauth2.TokenSource
	last       *signin.Token // what the store holds
	granted    []string      // scopes granted so far, kept through a step-up
	authorized bool          // a sign-in ran
}

// oauthFor returns the server's OAuth handler for l, made at its first
// start and kept while the URL stays the same.
func (s *server) oauthFor(l *launch) *signIn {
	if s.oauth != nil && s.oauth.url == l.url {
		return s.oauth
	}
	s.oauth = &signIn{m: s.m, name: s.cfg.Name, url: l.url, cfg: s.cfg.OAuth,
		clientID: l.clientID, clientSecret: l.clientSecret, redact: l.redact}
	return s.oauth
}

// authClient reaches authorization servers: the host's client, without
// the server's configured headers, which are for the server alone.
func (m *Manager) authClient() *http.Client {
	if m.opts.HTTPClient != nil {
		return m.opts.HTTPClient
	}
	return http.DefaultClient
}

// TokenSource returns the stored tokens' source, nil before any sign-in.
func (a *signIn) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.loaded && a.m.opts.Tokens != nil {
		t, err := a.m.opts.Tokens.Load(ctx, a.url)
		if err != nil {
			return nil, err
		}
		a.loaded = true
		if t != nil && t.ServerURL == a.url && t.AccessToken != "" {
			a.last = t
			a.granted = t.Scopes
			a.ts = a.source(tokenConfig(t), oauth2Token(t))
		}
	}
	a.loaded = true
	if a.ts == nil {
		return nil, nil
	}
	return a.ts, nil
}

// source is the token source of tok, refreshed through cfg, that stores
// every new token.
func (a *signIn) source(cfg *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, a.m.authClient())
	return &storingSource{a: a, cfg: cfg, base: cfg.TokenSource(ctx, tok), last: tok.AccessToken}
}

// storingSource stores a refreshed token, and turns a refresh that fails
// into "no token": the server's 401 then starts a sign-in (or says one is
// needed) instead of the call failing on the refresh.
type storingSource struct {
	a    *signIn
	cfg  *oauth2.Config
	base oauth2.TokenSource
	mu   sync.Mutex
	last string
}

func (s *storingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.base.Token()
	if err != nil {
		s.a.log("refreshing the sign-in failed; signing in again")
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the token expired and cannot be refreshed"}
	}
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		s.a.save(s.cfg, tok, "")
	}
	return tok, nil
}

func (a *signIn) log(msg string) {
	if l := a.m.opts.Logger; l != nil {
		l.Warn(msg, slog.String("server", a.name))
	}
}

// save stores tok under the server's URL; a store that fails keeps the
// sign-in for this Manager only.
func (a *signIn) save(cfg *oauth2.Config, tok *oauth2.Token, issuer string) {
	a.mu.Lock()
	t := &signin.Token{ServerURL: a.url, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle),
		Scopes: slices.Clone(cfg.Scopes), AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: tok.TokenType, Expiry: tok.Expiry}
	if t.RefreshToken == "" && a.last != nil {
		t.RefreshToken = a.last.RefreshToken // a refresh may not send a new one
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		t.Scopes = scopeList(s)
	}
	t.Issuer = issuer
	if issuer == "" && a.last != nil {
		t.Issuer = a.last.Issuer
	}
	if t.Issuer == "" {
		t.Issuer = originOf(t.AuthURL)
	}
	a.last = t
	a.granted = t.Scopes
	store := a.m.opts.Tokens
	a.mu.Unlock()
	if store == nil {
		return
	}
	if err := store.Save(context.Background(), t); err != nil {
		if l := a.m.opts.Logger; l != nil {
			l.Warn("the sign-in could not be stored; it lasts until basis exits", slog.String("server", a.name), slog.String("error", a.redact(err.Error())))
		}
	}
}

// originOf is scheme://host of u, or "" when u is not a URL.
func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// Authorize runs go-sdk's authorization code flow for a 401, or a 403
// asking for more scopes; the browser half is [ManagerOptions].SignIn's.
func (a *signIn) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	challenge := bearer(challenges)
	if resp.StatusCode == http.StatusForbidden && challenge["error"] != "insufficient_scope" {
		// Not a step-up: go-sdk's handler would retry as is.
		resp.Body.Close()
		return nil
	}
	hook := a.m.opts.SignIn
	if hook == nil {
		resp.Body.Close()
		return &SignInError{Server: a.name}
	}
	flow, err := hook(ctx, a.name)
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("signing in to %s: %w", printableName(a.name), err)
	}
	if flow.Close != nil {
		defer flow.Close()
	}
	a.mu.Lock()
	granted := slices.Clone(a.granted)
	a.mu.Unlock()
	var issuer string
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: flow.RedirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			res, err := flow.Fetch(ctx, args)
			if res != nil {
				issuer = res.Iss
			}
			return res, err
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{flow.RedirectURL},
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "basis",
		}},
		RequestRefreshToken: true,
		Client:              a.m.authClient(),
		ScopeFilter: func(discovered []string) []string {
			// A step-up keeps what was granted before (the handler is
			// new at each sign-in, so its own memory of them is gone).
			out := slices.Clone(granted)
			if a.cfg != nil && len(a.cfg.Scopes) > 0 {
				out = append(out, a.cfg.Scopes...)
				discovered = scopeList(challenge["scope"])
			}
			for _, s := range discovered {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return slices.Compact(out)
		},
		NewTokenSource: func(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			a.save(cfg, tok, issuer)
			return a.source(cfg, tok), nil
		},
	}
	if a.cfg != nil && a.cfg.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: a.cfg.ClientMetadataURL}
	}
	if a.clientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: a.clientID}
		if a.clientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.clientSecret}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("signing in to %s: %s", printableName(a.name), a.redact(err.Error()))
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		var sie *SignInError
		if errors.As(err, &sie) {
			return err
		}
		return &problem{kind: errSignInFailed, cause: err, text: "signing in to " + printableName(a.name) + " failed: " + a.redact(err.Error())}
	}
	ts, _ := h.TokenSource(ctx)
	a.mu.Lock()
	a.ts, a.loaded, a.authorized = ts, true, true
	a.mu.Unlock()
	return nil
}

// errSignInFailed: the sign-in ran and failed (refused, state or issuer
// mismatch, the token exchange failed).
var errSignInFailed = errors.New("MCP sign-in failed")

// bearer returns the parameters of the first Bearer challenge.
func bearer(cs []oauthex.Challenge) map[string]string {
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params
		}
	}
	return map[string]string{}
}

// forget drops the tokens held in memory.
func (a *signIn) forget() {
	a.mu.Lock()
	a.ts, a.last, a.granted, a.loaded, a.authorized = nil, nil, nil, true, false
	a.mu.Unlock()
}

// authTransport authorizes an sse server's requests as the streamable
// transport's OAuthHandler does, for the SSE transport has no such field:
// the token on every request, a sign-in on a 401 (or a 403 asking for
// more scopes) and the request sent once more.
type authTransport struct {
	base    http.RoundTripper
	handler auth.OAuthHandler
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	send := func() (*http.Response, error) {
		r := req.Clone(req.Context())
		if req.Body != nil && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		ts, err := t.handler.TokenSource(req.Context())
		if err != nil {
			return nil, err
		}
		if ts != nil {
			if tok, err := ts.Token(); err == nil && tok != nil {
				r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			}
		}
		return t.base.RoundTrip(r)
	}
	resp, err := send()
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot be sent again
	}
	if err := t.handler.Authorize(req.Context(), req, resp); err != nil {
		return nil, err
	}
	return send()
}

// scopeList splits a space-separated scope string.
func scopeList(s string) []string {
	var out []string
	for _, f := range splitSpaces(s) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func splitSpaces(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// signInOf returns the OAuth handler for server name's URL as configured
// now (expanded), for the Manager's sign-in methods.
func (m *Manager) signInOf(name string) (*server, *signIn, error) {
	s, err := m.server(name)
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.Type != TypeHTTP && s.cfg.Type != TypeSSE {
		return nil, nil, &ServerError{Server: name, Err: newProblem(errInvalidValue, "is a "+s.cfg.Type+" server; only an http or sse server signs in")}
	}
	l, err := s.cfg.expand(m.opts.Lookup)
	if err != nil {
		return nil, nil, &ServerError{Server: name, Err: err}
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	return s, s.oauthFor(l), nil
}

// Login signs in to server name afresh, forgetting its tokens; asked is
// false when the server did not ask for sign-in.
func (m *Manager) Login(ctx context.Context, name string) (asked bool, err error) {
	s, a, err := m.signInOf(name)
	if err != nil {
		return false, err
	}
	if err := m.Logout(ctx, name); err != nil {
		return false, err
	}
	_ = s.close() // a running session holds the old token
	if _, err := m.ServerTools(ctx, name); err != nil {
		return false, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.authorized, nil
}

// Logout forgets server name's tokens, stored and in memory.
func (m *Manager) Logout(ctx context.Context, name string) error {
	_, a, err := m.signInOf(name)
	if err != nil {
		return err
	}
	a.forget()
	if m.opts.Tokens == nil {
		return nil
	}
	if err := m.opts.Tokens.Delete(ctx, a.url); err != nil {
		return &ServerError{Server: name, Op: "logout", Err: err}
	}
	return nil
}

// SignInState says whether server name is signed in, starting nothing.
func (m *Manager) SignInState(ctx context.Context, name string) (signin.State, error) {
	s, err := m.server(name)
	if err != nil {
		return "", err
	}
	if s.cfg.Type != TypeHTTP && s.cfg.Type != TypeSSE {
		return signin.NotRequired, nil
	}
	_, a, err := m.signInOf(name)
	if err != nil {
		return "", err
	}
	if _, err := a.TokenSource(ctx); err != nil {
		return "", &ServerError{Server: name, Err: err}
	}
	a.mu.Lock()
	last := a.last
	a.mu.Unlock()
	switch {
	case last != nil && (last.RefreshToken != "" || last.Expiry.IsZero() || last.Expiry.After(time.Now())):
		return signin.SignedIn, nil
	case last != nil || s.cfg.OAuth != nil:
		return signin.NeedsSignIn, nil
	}
	return signin.NotRequired, nil
}
