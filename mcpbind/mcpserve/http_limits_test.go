package mcpserve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tiny is a limit a test waits out: short, so tests stay fast; what they
// wait for is polled under connBound.
const tiny = 50 * time.Millisecond

// connBound is how long a test waits, at most, for the server to close a
// connection it should close at once or after a tiny limit.
const connBound = 20 * time.Second

// The server ListenAndServe runs has the limits set, and no timeout that
// would cut a long call or the notification stream.
func TestHTTPServerLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits *mcpserve.HTTPLimits
		want   [5]any // ReadHeaderTimeout, IdleTimeout, MaxHeaderBytes, ReadTimeout, WriteTimeout
	}{
		{"defaults", nil, [5]any{10 * time.Second, 60 * time.Second, 64 << 10, time.Duration(0), time.Duration(0)}},
		{"zero fields are defaults", &mcpserve.HTTPLimits{}, [5]any{10 * time.Second, 60 * time.Second, 64 << 10, time.Duration(0), time.Duration(0)}},
		{"chosen", &mcpserve.HTTPLimits{ReadHeaderTimeout: time.Second, IdleTimeout: 2 * time.Second, MaxHeaderBytes: 1024},
			[5]any{time.Second, 2 * time.Second, 1024, time.Duration(0), time.Duration(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpserve.HTTPServerFor(http.NotFoundHandler(), tt.limits)
			got := [5]any{srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes, srv.ReadTimeout, srv.WriteTimeout}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("server limits (-want +got):\n%s", diff)
			}
		})
	}
}

// dial opens a raw connection to the server of endpoint.
func dial(t *testing.T, endpoint string) (net.Conn, *bufio.Reader) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// requireClosed reads what is left on the connection until the server
// closes it; a connection still open after connBound fails the test.
func requireClosed(t *testing.T, conn net.Conn, r *bufio.Reader) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(connBound))
	_, err := io.Copy(io.Discard, r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept the connection open for %v", connBound)
	}
}

// request is a raw HTTP request to the MCP endpoint; body is sent as it
// is, after headers.
func request(method, endpoint, authorization string, headers ...string) string {
	u, _ := url.Parse(endpoint)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.Path, u.Host)
	if authorization != "" {
		fmt.Fprintf(&b, "Authorization: %s\r\n", authorization)
	}
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestHTTPDisconnectsSlowAndIdleClients(t *testing.T) {
	good := "Bearer " + testToken
	tests := []struct {
		name   string
		limits mcpserve.HTTPLimits
		// send writes to the connection; status, when set, is the
		// response the server gives before it closes the connection.
		send   func(t *testing.T, conn net.Conn, endpoint string)
		status int
	}{
		{"a connection that sends nothing", mcpserve.HTTPLimits{ReadHeaderTimeout: tiny},
			func(*testing.T, net.Conn, string) {}, 0},
		{"half a header", mcpserve.HTTPLimits{ReadHeaderTimeout: tiny},
			func(t *testing.T, conn net.Conn, endpoint string) {
				io.WriteString(conn, strings.TrimSuffix(request("POST", endpoint, good), "\r\n\r\n")+"\r\nContent-Ty")
			}, 0},
		{"half a body", mcpserve.HTTPLimits{ReadBodyTimeout: tiny},
			func(t *testing.T, conn net.Conn, endpoint string) {
				io.WriteString(conn, request("POST", endpoint, good, "Content-Type: application/json", "Accept: application/json, text/event-stream", "Content-Length: 100")+`{"jsonrpc":`)
			}, http.StatusRequestTimeout},
		{"a kept-alive connection with no next request", mcpserve.HTTPLimits{IdleTimeout: tiny},
			func(t *testing.T, conn net.Conn, endpoint string) {
				// A GET without a session: 400, and the connection kept.
				io.WriteString(conn, request("GET", endpoint, good, "Accept: text/event-stream"))
			}, http.StatusBadRequest},
		{"a request without the token", mcpserve.HTTPLimits{},
			func(t *testing.T, conn net.Conn, endpoint string) {
				io.WriteString(conn, request("GET", endpoint, "", "Accept: text/event-stream"))
			}, http.StatusUnauthorized},
		{"a request with a wrong token", mcpserve.HTTPLimits{},
			func(t *testing.T, conn net.Conn, endpoint string) {
				io.WriteString(conn, request("POST", endpoint, "Bearer wrong-token-0123456789abcdef", "Content-Type: application/json", "Content-Length: 2")+"{}")
			}, http.StatusUnauthorized},
		{"a header over the limit", mcpserve.HTTPLimits{MaxHeaderBytes: 1024},
			func(t *testing.T, conn net.Conn, endpoint string) {
				// Go's server allows 4 KiB beyond the limit.
				io.WriteString(conn, request("GET", endpoint, good, "X-Padding: "+strings.Repeat("x", 16<<10)))
			}, http.StatusRequestHeaderFieldsTooLarge},
		{"a body over the limit", mcpserve.HTTPLimits{MaxBodyBytes: 1024},
			func(t *testing.T, conn net.Conn, endpoint string) {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 2048) + `"}}}`
				io.WriteString(conn, request("POST", endpoint, good, "Content-Type: application/json", "Accept: application/json, text/event-stream",
					fmt.Sprintf("Content-Length: %d", len(body)))+body)
			}, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			endpoint, _ := startHTTPWith(t, h, &tt.limits)
			conn, r := dial(t, endpoint)
			tt.send(t, conn, endpoint)
			if tt.status != 0 {
				conn.SetReadDeadline(time.Now().Add(connBound))
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("no response: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
				}
				if tt.status == http.StatusUnauthorized && !resp.Close {
					t.Error("the 401 does not say Connection: close")
				}
			}
			requireClosed(t, conn, r)
			if n := h.roster.calls.Load(); n != 0 {
				t.Errorf("the roster ran %d calls", n)
			}
		})
	}
}

// The limits bound reading requests and idle connections, never a
// response in progress: a call that waits on its user's answer for longer
// than every limit still returns its result, and the stream a client
// opened with GET for notifications still carries them.
func TestHTTPLimitsDoNotCutALongCallOrTheStream(t *testing.T) {
	h := newHarness(t, nil)
	endpoint, _ := startHTTPWith(t, h, &mcpserve.HTTPLimits{ReadHeaderTimeout: tiny, ReadBodyTimeout: tiny, IdleTimeout: tiny})
	changed := make(chan struct{}, 1)
	asked, answer := make(chan struct{}), make(chan struct{})
	cs, err := connectHTTP(t, endpoint, testToken, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-answer
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
		},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
		done <- result{res, err}
	}()
	<-asked
	// Connections opened after the call began are closed for sending
	// nothing and for idling: by then the call, and the stream, have
	// lasted longer than either limit.
	conn, r := dial(t, endpoint)
	requireClosed(t, conn, r)
	conn, r = dial(t, endpoint)
	io.WriteString(conn, request("GET", endpoint, "Bearer "+testToken, "Accept: text/event-stream"))
	requireClosed(t, conn, r)

	close(answer)
	select {
	case got := <-done:
		if got.err != nil || got.res.IsError || textOf(t, got.res) != "deploy done (allow_once)" {
			t.Errorf("the long call: %v %+v", got.err, got.res)
		}
	case <-time.After(connBound):
		t.Fatal("the long call's result never came")
	}
	h.roster.add(contract.Descriptor{Name: "late", Description: "Came late.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	h.server.Refresh()
	select {
	case <-changed:
	case <-time.After(connBound):
		t.Error("no tools/list_changed: the notification stream was cut")
	}
}

// At most MaxSessions are open (clients of protocols with sessions; a
// sessionless one holds none): the next client is refused with 503 and a
// JSON-RPC error that says why, and is served once a session ends.
func TestHTTPCapsSessions(t *testing.T) {
	h := newHarness(t, nil)
	endpoint, _ := startHTTPWith(t, h, &mcpserve.HTTPLimits{MaxSessions: 2})
	var open []*mcp.ClientSession
	for i := range 2 {
		cs, err := connectHTTP(t, endpoint, testToken, nil, "2025-11-25")
		if err != nil {
			t.Fatalf("client %d: %v", i+1, err)
		}
		open = append(open, cs)
	}
	if _, err := connectHTTP(t, endpoint, testToken, nil, "2025-11-25"); err == nil {
		t.Fatal("a third client connected past the cap of 2")
	}
	initialize := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`
	resp, body := post(t, endpoint, "", "Bearer "+testToken, initialize)
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"basis serve holds at most 2 sessions at once, and that many are open: ` +
		`close a client you no longer use (an idle session also ends by itself), then connect again"}}` + "\n"
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Mcp-Session-Id") != "" || body != want {
		t.Errorf("status %d, session %q, body %s; want 503, no session, %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body, want)
	}
	if !strings.Contains(h.log.String(), "an HTTP client was refused a session: 2 are open") {
		t.Errorf("the log does not say a session was refused:\n%s", h.log.String())
	}
	// The sessions that are open still work.
	if _, err := open[1].ListTools(context.Background(), nil); err != nil {
		t.Errorf("an open session: %v", err)
	}

	// A client that leaves (DELETE) gives its place back; the session's
	// end reaches the cap a moment later, so poll.
	if err := open[0].Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(connBound)
	for {
		cs, err := connectHTTP(t, endpoint, testToken, nil, "2025-11-25")
		if err == nil {
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Errorf("the new session: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session opened after one ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
