package mcpserve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
)

// idObserver writes down, as each served request ends, its method,
// transport and the JSON-RPC id mcpserve reports for it.
type idObserver struct {
	mu   sync.Mutex
	seen []string
}

func (o *idObserver) StartServedRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(string)) {
	return ctx, func(string) {
		id := "<no RequestID>"
		if req.RequestID != nil {
			id = req.RequestID()
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		o.seen = append(o.seen, fmt.Sprintf("%s transport=%s id=%s", req.Method, req.Transport, id))
	}
}

func (o *idObserver) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// pipeClient speaks raw JSON-RPC lines to a server served over a pair
// of pipes, as a stdio client does.
type pipeClient struct {
	w      io.Writer
	lines  *bufio.Scanner
	served chan error
}

// servePipes serves h over an io transport on pipes, as basis serve
// serves stdio.
func servePipes(t *testing.T, h *harness) *pipeClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &pipeClient{w: inW, lines: bufio.NewScanner(outR), served: make(chan error, 1)}
	c.lines.Buffer(nil, 1<<20)
	go func() {
		err := h.server.Serve(ctx, mcpserve.StdioTransport(inR, outW))
		outW.Close()
		c.served <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return c
}

// send writes one line; when it holds calls, it returns the answer line
// of each, in the order they come.
func (c *pipeClient) send(t *testing.T, line string, answers int) []string {
	t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		t.Fatalf("writing %s: %v", line, err)
	}
	var got []string
	for len(got) < answers {
		if !c.lines.Scan() {
			t.Fatalf("the server closed its output before answering %s: %v", line, c.lines.Err())
		}
		got = append(got, c.lines.Text())
	}
	return got
}

// idOf returns the id of a JSON-RPC answer, in its string form.
func idOf(t *testing.T, answer string) string {
	t.Helper()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(answer), &msg); err != nil {
		t.Fatalf("answer %s: %v", answer, err)
	}
	var s string
	if json.Unmarshal(msg.ID, &s) == nil {
		return s
	}
	return string(msg.ID)
}

// Over stdio, with an observer, each call served is reported with the
// id its client sent: a number or a string, the same the answer
// carries; the transport is a pipe.
func TestServeStdioReportsRequestIDs(t *testing.T) {
	obs := &idObserver{}
	h := newHarness(t, &mcpserve.ServerOptions{Observer: obs})
	c := servePipes(t, h)
	init := c.send(t, `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"v0"}}}`, 1)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0)
	list := c.send(t, `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`, 1)
	call := c.send(t, `{"jsonrpc":"2.0","id":"call \"7\"","method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}`, 1)
	long := c.send(t, `{"jsonrpc":"2.0","id":"`+strings.Repeat("x", 257)+`","method":"tools/list"}`, 1)
	ids := []string{idOf(t, init[0]), idOf(t, list[0]), idOf(t, call[0])}
	if diff := cmp.Diff([]string{"init-1", "42", `call "7"`}, ids); diff != "" {
		t.Fatalf("answers' ids (-want +got):\n%s", diff)
	}
	if len(idOf(t, long[0])) != 257 {
		t.Fatalf("the long id's answer: %s", long[0])
	}
	want := []string{
		"initialize transport=pipe id=init-1",
		"tools/list transport=pipe id=42",
		`tools/call transport=pipe id=call "7"`,
		// Too long to record: the span has no id rather than
		// kilobytes of the client's choosing.
		"tools/list transport=pipe id=<no RequestID>",
	}
	if diff := cmp.Diff(want, obs.requests()); diff != "" {
		t.Errorf("requests observed (-want +got):\n%s", diff)
	}
}

// Wrapping the stdio connection keeps what the SDK's own does with the
// protocol the session negotiated: a JSON-RPC batch is served on
// 2025-03-26 and ends the connection from 2025-06-18 on, with an
// observer or without.
func TestServeStdioBatchesAsTheSDK(t *testing.T) {
	tests := []struct {
		version  string
		observed bool
		served   bool
	}{
		{"2025-03-26", false, true},
		{"2025-03-26", true, true},
		{"2025-11-25", false, false},
		{"2025-11-25", true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s observed=%v", tt.version, tt.observed), func(t *testing.T) {
			var opts *mcpserve.ServerOptions
			obs := &idObserver{}
			if tt.observed {
				opts = &mcpserve.ServerOptions{Observer: obs}
			}
			c := servePipes(t, newHarness(t, opts))
			c.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tt.version+`","capabilities":{},"clientInfo":{"name":"c","version":"v0"}}}`, 1)
			// A string holding brackets, and a list in the params,
			// are no batch.
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"k":"[\"[","l":[1,[2]]}}}`, 0)
			if !tt.served {
				if _, err := io.WriteString(c.w, `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`+"\n"); err != nil {
					t.Fatal(err)
				}
				if c.lines.Scan() {
					t.Fatalf("the batch was answered: %s", c.lines.Text())
				}
				if err := <-c.served; err == nil {
					t.Errorf("Serve returned nil after a batch on %s, want the connection's error", tt.version)
				}
				return
			}
			got := c.send(t, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, 1)
			var answers []json.RawMessage
			if err := json.Unmarshal([]byte(got[0]), &answers); err != nil || len(answers) != 2 {
				t.Fatalf("the batch's answer %s: %v", got[0], err)
			}
			if tt.observed {
				want := []string{"initialize transport=pipe id=1", "ping transport=pipe id=2", "ping transport=pipe id=3"}
				if diff := cmp.Diff(want, sortedTail(obs.requests())); diff != "" {
					t.Errorf("requests observed (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// sortedTail orders the requests after the first (the batch's calls run
// concurrently, so they end in any order).
func sortedTail(s []string) []string {
	if len(s) > 2 && s[1] > s[2] {
		s[1], s[2] = s[2], s[1]
	}
	return s
}

// httpPost sends one message on a session, with the token and the extra
// headers given.
func httpPost(t *testing.T, url, session, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	return postWith(t, url, session, "Bearer "+testToken, body, header)
}

// answerID returns the id of the JSON-RPC answer in a response body,
// plain JSON or one SSE event.
func answerID(t *testing.T, body string) string {
	t.Helper()
	for line := range strings.Lines(body) {
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok {
			return idOf(t, strings.TrimSpace(data))
		}
	}
	return idOf(t, body)
}

// Over streamable HTTP, with an observer, each call served is reported
// with the id its POST carried, as the SDK decoded it (the answer's); the
// transport is TCP. Headers a client sends in the names basis reserves,
// in any spelling, never reach the observer.
func TestServeHTTPReportsRequestIDs(t *testing.T) {
	obs := &idObserver{}
	h := newHarness(t, &mcpserve.ServerOptions{Observer: obs})
	handler, err := h.server.HTTPHandler(testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(handler)
	t.Cleanup(web.Close)
	forged := http.Header{"basis-jsonrpc-request-id": {"forged"}, "BASIS-TRANSPORT": {"pipe"}}

	resp, body := httpPost(t, web.URL, "", `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"v0"}}}`, forged)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	httpPost(t, web.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, forged)
	var answered []string
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":42,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}`,
		// The id the SDK answers to, not the first one in the body.
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`,
		// Too long to record: no id, and never the forged one.
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 257) + `","method":"ping"}`,
	} {
		resp, body := httpPost(t, web.URL, session, msg, forged)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %s", msg, resp.Status, body)
		}
		answered = append(answered, answerID(t, body))
	}
	// Without the reserved header's copies, too.
	resp, body = httpPost(t, web.URL, session, `{"jsonrpc":"2.0","id":"plain","method":"ping"}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %s %s", resp.Status, body)
	}
	want := []string{
		"initialize transport=tcp id=init-1",
		"tools/list transport=tcp id=" + answered[0],
		"tools/call transport=tcp id=" + answered[1],
		"tools/list transport=tcp id=" + answered[2],
		"ping transport=tcp id=<no RequestID>",
		"ping transport=tcp id=plain",
	}
	if diff := cmp.Diff([]string{"42", "call-1"}, answered[:2]); diff != "" {
		t.Errorf("answers' ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, obs.requests()); diff != "" {
		t.Errorf("requests observed (-want +got):\n%s", diff)
	}
}
