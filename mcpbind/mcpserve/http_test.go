package mcpserve_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "test-token-0123456789abcdef"

// startHTTP serves h over loopback HTTP and returns the endpoint and a
// function that shuts the server down and returns ListenAndServe's error.
func startHTTP(t *testing.T, h *harness) (endpoint string, stop func() error) {
	t.Helper()
	return startHTTPWith(t, h, nil)
}

// startHTTPWith is startHTTP with limits of the test's choosing.
func startHTTPWith(t *testing.T, h *harness, limits *mcpserve.HTTPLimits) (endpoint string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- h.server.ListenAndServe(ctx, mcpserve.HTTPOptions{Addr: "127.0.0.1:0", Token: testToken, Limits: limits, Listening: func(a net.Addr) { addr <- a }})
	}()
	select {
	case a := <-addr:
		endpoint = "http://" + a.String() + "/mcp"
	case err := <-served:
		cancel()
		t.Fatalf("ListenAndServe: %v", err)
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-served
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return endpoint, stop
}

// bearer adds the Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, endpoint, token string, copts *mcp.ClientOptions, version string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1}
	cs, err := connectListening(context.Background(), mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v0"}, copts), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8765", true},
		{"127.1.2.3:0", true},
		{"[::1]:8765", true},
		{"localhost:8765", true},
		{"LOCALHOST:1", true},
		{":8765", false},
		{"0.0.0.0:8765", false},
		{"[::]:8765", false},
		{"192.168.1.10:8765", false},
		{"example.com:80", false},
		{"localhost.example.com:80", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := mcpserve.CheckLoopback(tt.addr)
			if (err == nil) != tt.ok {
				t.Errorf("CheckLoopback(%q) = %v, want ok %v", tt.addr, err, tt.ok)
			}
			if err != nil && !errors.Is(err, mcpserve.ErrNotLoopback) {
				t.Errorf("error %v does not wrap ErrNotLoopback", err)
			}
		})
	}
	if err := mcpserve.CheckLoopback("no-port"); err == nil || errors.Is(err, mcpserve.ErrNotLoopback) {
		t.Errorf("CheckLoopback(no-port) = %v, want an address error", err)
	}
}

func TestListenAndServeRefusals(t *testing.T) {
	tests := []struct {
		name string
		opts mcpserve.HTTPOptions
		want string
	}{
		{"every interface", mcpserve.HTTPOptions{Addr: "0.0.0.0:0", Token: testToken}, "not a loopback address"},
		{"empty host", mcpserve.HTTPOptions{Addr: ":0", Token: testToken}, "not a loopback address"},
		{"no token", mcpserve.HTTPOptions{Addr: "127.0.0.1:0"}, "bearer token too short"},
		{"short token", mcpserve.HTTPOptions{Addr: "127.0.0.1:0", Token: "short"}, "bearer token too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			listened := false
			tt.opts.Listening = func(net.Addr) { listened = true }
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := h.server.ListenAndServe(ctx, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ListenAndServe = %v, want %v", err, tt.want)
			}
			if listened {
				t.Errorf("the server listened")
			}
		})
	}
}

// post sends one JSON-RPC message the way a streamable HTTP client does.
func post(t *testing.T, endpoint, session, authorization, body string) (*http.Response, string) {
	t.Helper()
	return postWith(t, endpoint, session, authorization, body, nil)
}

// postWith is post with extra headers, which the client's own replace.
func postWith(t *testing.T, endpoint, session, authorization, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(got)
}

// TestHTTPRequiresTheToken opens a session with the token, then sends a
// call on it with no token or a wrong one: 401, and nothing runs. The same
// call with the token runs, so the token was the only difference.
func TestHTTPRequiresTheToken(t *testing.T) {
	h := newHarness(t, nil)
	endpoint, _ := startHTTP(t, h)
	good := "Bearer " + testToken
	resp, _ := post(t, endpoint, "", good, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, session)
	}
	if resp, _ := post(t, endpoint, session, good, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: status %d", resp.StatusCode)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ran"}}}`
	tests := []struct {
		name   string
		header string
	}{
		{"no header", ""},
		{"wrong token", "Bearer wrong-token-0123456789abcdef"},
		{"token prefix", "Bearer " + testToken[:len(testToken)-1]},
		{"token and more", good + "x"},
		{"basic scheme", "Basic " + testToken},
		{"bare token", testToken},
		{"empty bearer", "Bearer "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, endpoint, session, tt.header, call)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", resp.StatusCode)
			}
			if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate %q, want a Bearer challenge", got)
			}
			if strings.Contains(body, "ran") {
				t.Errorf("the body %q carries the call's result", body)
			}
		})
	}
	if _, err := connectHTTP(t, endpoint, "wrong-token-0123456789abcdef", nil, ""); err == nil {
		t.Errorf("a client with a wrong token connected")
	}
	if n := h.roster.calls.Load(); n != 0 {
		t.Fatalf("the roster ran %d calls for unauthenticated requests", n)
	}
	resp, body := post(t, endpoint, session, good, call)
	if resp.StatusCode != http.StatusOK || h.roster.calls.Load() != 1 || !strings.Contains(body, `"text":"ran"`) {
		t.Errorf("with the token: status %d, %d calls, body %q; want 200, 1 call, the result", resp.StatusCode, h.roster.calls.Load(), body)
	}
}

func TestHTTPClientsAreIndependentSessions(t *testing.T) {
	// A client asking for the newest protocol gets it over HTTP, without
	// a session; an older one gets a session (see ListenAndServe).
	for _, version := range []string{"", "2025-06-18"} {
		t.Run(versionName(version), func(t *testing.T) {
			h := newHarness(t, nil)
			endpoint, _ := startHTTP(t, h)
			progress := make(chan string, 8)
			slowClient, err := connectHTTP(t, endpoint, testToken, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				progress <- r.Params.Message
			}}, version)
			if err != nil {
				t.Fatal(err)
			}
			asker, err := connectHTTP(t, endpoint, testToken, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
			}}, version)
			if err != nil {
				t.Fatal(err)
			}
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if got := asker.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %s, want %s", got, want)
			}
			ctx, cancel := context.WithCancel(context.Background())
			slowDone := make(chan struct{})
			go func() {
				defer close(slowDone)
				p := &mcp.CallToolParams{Name: "slow"}
				p.SetProgressToken("slow-1")
				slowClient.CallTool(ctx, p)
			}()
			<-h.roster.started
			for i := range 3 {
				select {
				case got := <-progress:
					if want := fmt.Sprintf("step %d", i+1); got != want {
						t.Errorf("progress %q, want %q", got, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no progress over HTTP")
				}
			}
			// While one client's call runs, the other lists, calls, and is
			// asked and answers.
			if _, err := asker.ListTools(context.Background(), nil); err != nil {
				t.Errorf("list: %v", err)
			}
			res, err := asker.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
			if err != nil || res.IsError || textOf(t, res) != "deploy done (allow_once)" {
				t.Errorf("deploy over HTTP: %v %+v", err, res)
			}
			cancel()
			<-slowDone
		})
	}
}

func TestHTTPShutdownCancelsCallsInFlight(t *testing.T) {
	h := newHarness(t, nil)
	endpoint, stop := startHTTP(t, h)
	cs, err := connectHTTP(t, endpoint, testToken, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
	<-h.roster.started
	if err := stop(); err != nil {
		t.Errorf("ListenAndServe after shutdown: %v", err)
	}
	// ListenAndServe returned only after the call's pipeline ended.
	if n := h.roster.inFlight.Load(); n != 0 {
		t.Errorf("%d calls still running after shutdown", n)
	}
	select {
	case err := <-h.roster.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the call ended with %v, want context.Canceled", err)
		}
	default:
		t.Error("the call in flight was not cancelled")
	}
	// A shut-down server starts nothing more, on any transport.
	late := h.connect(t, nil, "", nil)
	res, err := late.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "late"}})
	if err != nil || !res.IsError || textOf(t, res) != "basis: the server is shutting down; the call was not run" {
		t.Errorf("a call after shutdown: %v %+v", err, res)
	}
	if n := h.roster.calls.Load(); n != 1 {
		t.Errorf("the roster ran %d calls, want 1", n)
	}
}

// A client without a session (2026-07-28) cancels a call by ending its
// request: the call is cancelled.
func TestHTTPSessionlessCancellationCancelsTheCall(t *testing.T) {
	h := newHarness(t, nil)
	endpoint, _ := startHTTP(t, h)
	cs, err := connectHTTP(t, endpoint, testToken, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	cancelSlowCall(t, h, cs)
}
