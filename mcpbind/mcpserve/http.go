package mcpserve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of serving over HTTP.
var (
	// ErrNotLoopback: the address to listen on is not a loopback address
	// and remote clients were not allowed. basis serve branches on it to
	// say how to serve other machines on purpose.
	ErrNotLoopback = errors.New("not a loopback address")
	// errWeakToken: the bearer token is shorter than [MinTokenLen].
	errWeakToken = errors.New("bearer token too short")
)

// MinTokenLen is the shortest bearer token the HTTP server accepts.
const MinTokenLen = 16

// The defaults of [HTTPLimits].
const (
	defaultReadHeaderTimeout  = 10 * time.Second
	defaultReadBodyTimeout    = 30 * time.Second
	defaultIdleTimeout        = 60 * time.Second
	defaultMaxHeaderBytes     = 64 << 10
	defaultMaxBodyBytes       = 4 << 20 // a JSON-RPC message: mostly a tool's arguments
	defaultMaxSessions        = 64
	defaultSessionIdleTimeout = 30 * time.Minute
)

// HTTPLimits bounds what HTTP clients can hold of the server: time,
// memory, connections, sessions. A nil *HTTPLimits, and each field left
// zero, means the default. No timeout covers a whole request: a call may
// run for minutes, and a GET stream lasts as long as its session.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's header, from the
	// moment the connection is ready for it (default 10 s).
	ReadHeaderTimeout time.Duration
	// ReadBodyTimeout bounds reading a request's body; past it, 408
	// (default 30 s).
	ReadBodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection on which no next request
	// starts (default 60 s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header, plus Go's 4 KiB of slack;
	// past it, 431 (default 64 KiB).
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request's body; past it, 413 (default 4 MiB).
	MaxBodyBytes int64
	// MaxSessions bounds the sessions open at once; one more gets 503
	// (default 64).
	MaxSessions int
	// SessionIdleTimeout closes a session that has had no request for
	// that long (default 30 min).
	SessionIdleTimeout time.Duration
}

// withDefaults returns the limits with every zero field set to its
// default.
func (l *HTTPLimits) withDefaults() HTTPLimits {
	var out HTTPLimits
	if l != nil {
		out = *l
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&out.ReadHeaderTimeout, defaultReadHeaderTimeout)
	def(&out.ReadBodyTimeout, defaultReadBodyTimeout)
	def(&out.IdleTimeout, defaultIdleTimeout)
	def(&out.SessionIdleTimeout, defaultSessionIdleTimeout)
	if out.MaxHeaderBytes <= 0 {
		out.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if out.MaxBodyBytes <= 0 {
		out.MaxBodyBytes = defaultMaxBodyBytes
	}
	if out.MaxSessions <= 0 {
		out.MaxSessions = defaultMaxSessions
	}
	return out
}

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
	// Limits bounds what clients can hold of the server; nil means the
	// defaults.
	Limits *HTTPLimits
}

// CheckLoopback returns nil when addr (host:port) names a loopback host: a
// loopback IP or "localhost". An empty host (every interface) and any
// other name are refused with an error wrapping [ErrNotLoopback].
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcpserve: serve over HTTP: the address must be host:port, such as 127.0.0.1:8765: %w", err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("mcpserve: serve over HTTP: %w: listen on 127.0.0.1 or [::1], or allow remote clients explicitly (the server runs tools on this machine for whoever holds the token)", ErrNotLoopback)
}

// HTTPHandler returns the streamable HTTP handler for the server, behind
// bearer-token authentication: a request without the token, or with a
// wrong one, gets 401, reaches nothing, and its connection is closed.
// Behind the token, the handler enforces the body's size and read
// timeout and the cap on sessions of limits (nil: the defaults). The
// header's limits and the idle timeout belong to the http.Server: one
// that serves this handler sets ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes, as [Server.ListenAndServe] does.
func (s *Server) HTTPHandler(token string, limits *HTTPLimits) (http.Handler, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("mcpserve: serve over HTTP: %w: use at least %d characters (NewToken makes one)", errWeakToken, MinTokenLen)
	}
	l := limits.withDefaults()
	get := func(*http.Request) *mcp.Server { return s.mcp }
	h := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		SessionTimeout:      l.SessionIdleTimeout,
		MaxRequestBodyBytes: l.MaxBodyBytes,
	})
	// Protocol 2026-07-28 has no sessions: the SDK speaks it only on a
	// stateless handler, a second one beside the stateful one.
	// Without a session a client cancels a call by ending its request,
	// so the request's end cancels the call.
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		MaxRequestBodyBytes:          l.MaxBodyBytes,
		PropagateRequestCancellation: true,
	})
	return requireBearer(token, s.bounded(l, h, stateless)), nil
}

// requireBearer lets through only requests whose Authorization header is
// "Bearer <token>". The comparison is of digests, in constant time, so
// neither the token's bytes nor its length leak through timing. A refused
// request's connection is closed: a client without the token keeps
// nothing open.
func requireBearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		digest := sha256.Sum256([]byte(got))
		ok := subtle.ConstantTimeCompare(digest[:], want[:]) == 1
		if !strings.EqualFold(scheme, "Bearer") || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="basis"`)
			w.Header().Set("Connection", "close")
			http.Error(w, "401 Unauthorized: send the header Authorization: Bearer TOKEN with the token basis serve was started with", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bounded reads a POST's body whole, within the size and time limits,
// before next sees it, and refuses a request that would open a session
// past the cap. A GET (the notification stream) and a DELETE have no
// body, and nothing here bounds how long they last.
//
// A request for the sessionless revision ([sessionless]) goes to
// modern, every other one to next.
func (s *Server) bounded(l HTTPLimits, next, modern http.Handler) http.Handler {
	var mu sync.Mutex
	sessions := 0 // opening or open, through this handler
	release := func() {
		mu.Lock()
		sessions--
		mu.Unlock()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			if s.opts.Observer != nil {
				markRequestID(r, nil)
			}
			if sessionless(r, nil) {
				modern.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r, l)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if s.opts.Observer != nil {
			markRequestID(r, body)
		}
		if sessionless(r, body) {
			// No session is opened: nothing to count.
			modern.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Mcp-Session-Id") != "" || !opensSession(body) {
			next.ServeHTTP(w, r)
			return
		}
		// An initialize without a session opens one: it takes a place,
		// which the session gives back when it ends.
		mu.Lock()
		if sessions >= l.MaxSessions {
			mu.Unlock()
			s.logf("an HTTP client was refused a session: %d are open, the most this server holds at once", l.MaxSessions)
			refuseSession(w, body, l.MaxSessions)
			return
		}
		sessions++
		mu.Unlock()
		next.ServeHTTP(w, r)
		if ss := s.session(w.Header().Get("Mcp-Session-Id")); ss != nil {
			go func() {
				ss.Wait()
				release()
			}()
			return
		}
		release() // no session was made, or it was not initialized
	})
}

// opensSession reports whether a POST without a session may leave one
// open: an initialize, or anything that is not one plain message. The SDK
// closes the session it makes for any other message as that request
// ends, so such a message holds no place; counting it would also hold a
// place a moment after its response has reached the client, which could
// refuse that client's next request, its initialize.
func opensSession(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) != nil || msg.Method == "initialize"
}

// session returns the initialized session of that id, or nil. The SDK
// makes a session for any request without one, and closes it at once
// when that request was not an initialize.
func (s *Server) session(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id && ss.InitializeParams() != nil {
			return ss
		}
	}
	return nil
}

// readBody reads a request's body within the limits; when it cannot, it
// answers (413 or 408, closing the connection) and reports false.
func readBody(w http.ResponseWriter, r *http.Request, l HTTPLimits) ([]byte, bool) {
	if r.Body == nil {
		return nil, true
	}
	rc := http.NewResponseController(w)
	// Where the deadline cannot be set (a writer that is not a
	// connection's), the size bound still holds.
	deadline := rc.SetReadDeadline(time.Now().Add(l.ReadBodyTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.MaxBodyBytes))
	if deadline && err == nil {
		// Only a body read in time clears the deadline: after a
		// failure, the server's own attempt to drain the body must
		// fail at once too, not wait for a client that stalls.
		rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("413 Request Entity Too Large: a request body is at most %d bytes", l.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		w.Header().Set("Connection", "close")
		http.Error(w, "408 Request Timeout: the request body did not arrive in time", http.StatusRequestTimeout)
		return nil, false
	}
	return body, true
}

// refuseSession answers a request that would open a session past the cap:
// 503, with a JSON-RPC error a client can show (the request's id, when it
// has one).
func refuseSession(w http.ResponseWriter, body []byte, max int) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(body, &req) == nil && len(req.ID) > 0 {
		id = req.ID
	}
	msg, _ := json.Marshal(fmt.Sprintf("basis serve holds at most %d sessions at once, and that many are open: "+
		"close a client you no longer use (an idle session also ends by itself), then connect again", max))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "10")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`+"\n", id, msg)
}

// newHTTPServer is the http.Server ListenAndServe serves h on. No
// WriteTimeout: it would end a tool call that runs long, or the
// notification stream, midway. The body's read timeout is the handler's
// (HTTPLimits.ReadBodyTimeout), so a host that serves HTTPHandler on a
// server of its own has it too.
func newHTTPServer(h http.Handler, l HTTPLimits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// ListenAndServe serves streamable HTTP on o.Addr until ctx is done. Then
// it shuts the whole server down: it cancels every call in flight, waits
// for their pipelines to end (so their audit records are written), closes
// every session and the listener. A server is not served again after.
//
// A client of a protocol up to 2025-11-25 is a session of its own; a
// client of 2026-07-28 has no session, each request standing alone
// (approval questions are input requests, answered in a retry), and every
// such client of the server is one [Client]. stdio serves both too.
func (s *Server) ListenAndServe(ctx context.Context, o HTTPOptions) error {
	if !o.AllowRemote {
		if err := CheckLoopback(o.Addr); err != nil {
			return err
		}
	}
	h, err := s.HTTPHandler(o.Token, o.Limits)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("mcpserve: serve over HTTP: %w", err)
	}
	// "localhost" is a name: check what it bound to.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !o.AllowRemote && !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("mcpserve: serve over HTTP: %w: the address resolved to a non-loopback interface", ErrNotLoopback)
	}
	if o.Listening != nil {
		o.Listening(ln.Addr())
	}
	srv := newHTTPServer(h, o.Limits.withDefaults())
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go s.watch(watchCtx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		s.shutdown()
		return fmt.Errorf("mcpserve: serve over HTTP: %w", err)
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
