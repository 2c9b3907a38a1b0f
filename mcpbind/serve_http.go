package mcpbind

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of serving over HTTP.
var (
	// ErrNotLoopback: the address to listen on is not a loopback address
	// and remote clients were not allowed.
	ErrNotLoopback = errors.New("not a loopback address")
	// ErrWeakToken: the bearer token is shorter than [MinTokenLen].
	ErrWeakToken = errors.New("bearer token too short")
)

// MinTokenLen is the shortest bearer token the HTTP server accepts.
const MinTokenLen = 16

// httpSessionIdle closes an HTTP session nobody has used for this long, so
// abandoned sessions do not pile up in a long run.
const httpSessionIdle = 30 * time.Minute

// shutdownGrace is how long a shutdown waits for HTTP responses in flight
// (cancelled calls writing their results) before closing connections.
const shutdownGrace = 5 * time.Second

// NewToken returns a fresh random bearer token (26 characters, 130 bits).
func NewToken() string { return rand.Text() }

// HTTPOptions configures [Server.ListenAndServe].
type HTTPOptions struct {
	// Addr is host:port to listen on, such as "127.0.0.1:8765". Port 0
	// picks a free port (see Listening).
	Addr string
	// Token is the bearer token every request must carry; at least
	// [MinTokenLen] characters.
	Token string
	// AllowRemote permits an address that is not loopback. Without it such
	// an address is refused: the server runs tools on this machine.
	AllowRemote bool
	// Listening, when set, is called once with the address the server
	// listens on, before it serves the first request.
	Listening func(addr net.Addr)
}

// CheckLoopback returns nil when addr (host:port) names a loopback host: a
// loopback IP or "localhost". An empty host (every interface) and any
// other name are refused with an error wrapping [ErrNotLoopback].
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcpbind: serve over HTTP: the address must be host:port, such as 127.0.0.1:8765: %w", err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("mcpbind: serve over HTTP: %w: listen on 127.0.0.1 or [::1], or allow remote clients explicitly (the server runs tools on this machine for whoever holds the token)", ErrNotLoopback)
}

// HTTPHandler returns the streamable HTTP handler for the server, behind
// bearer-token authentication: a request without the token, or with a
// wrong one, gets 401 and reaches nothing.
func (s *Server) HTTPHandler(token string) (http.Handler, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("mcpbind: serve over HTTP: %w: use at least %d characters (NewToken makes one)", ErrWeakToken, MinTokenLen)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout: httpSessionIdle,
	})
	return requireBearer(token, h), nil
}

// requireBearer lets through only requests whose Authorization header is
// "Bearer <token>". The comparison is of digests, in constant time, so
// neither the token's bytes nor its length leak through timing.
func requireBearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		digest := sha256.Sum256([]byte(got))
		ok := subtle.ConstantTimeCompare(digest[:], want[:]) == 1
		if !strings.EqualFold(scheme, "Bearer") || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="basis"`)
			http.Error(w, "401 Unauthorized: send the header Authorization: Bearer TOKEN with the token basis serve was started with", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ListenAndServe serves streamable HTTP on o.Addr until ctx is done. Then
// it shuts the whole server down: it cancels every call in flight, waits
// for their pipelines to end (so their audit records are written), closes
// every session and the listener. A server is not served again after.
//
// Each HTTP client is a session of its own. The SDK's stateful streamable
// transport speaks protocols up to 2025-11-25, so a client that asks for
// 2026-07-28 over HTTP settles on 2025-11-25 (elicitation, progress and
// list_changed all work there); stdio serves 2026-07-28 too.
func (s *Server) ListenAndServe(ctx context.Context, o HTTPOptions) error {
	if !o.AllowRemote {
		if err := CheckLoopback(o.Addr); err != nil {
			return err
		}
	}
	h, err := s.HTTPHandler(o.Token)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("mcpbind: serve over HTTP: %w", err)
	}
	// "localhost" is a name: check what it bound to.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !o.AllowRemote && !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("mcpbind: serve over HTTP: %w: the address resolved to a non-loopback interface", ErrNotLoopback)
	}
	if o.Listening != nil {
		o.Listening(ln.Addr())
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		s.shutdown()
		return fmt.Errorf("mcpbind: serve over HTTP: %w", err)
	case <-ctx.Done():
	}
	s.shutdown()
	// Open event streams do not end on their own; closing the sessions
	// ends them, so the shutdown below is quick.
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	graceCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(graceCtx); err != nil {
		srv.Close()
	}
	return nil
}
