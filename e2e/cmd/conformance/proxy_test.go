package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBearerProxy: the proxy adds the token, passes the request as the
// suite sent it (path, method, body, Host and Origin, which the suite's
// DNS rebinding checks set on purpose), and streams an SSE response event
// by event rather than at its end.
func TestBearerProxy(t *testing.T) {
	type seen struct{ Method, Path, Host, Origin, Auth, Body string }
	got := make(chan seen, 1)
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body strings.Builder
		bufio.NewReader(r.Body).WriteTo(&body)
		got <- seen{r.Method, r.URL.Path, r.Host, r.Header.Get("Origin"), r.Header.Get("Authorization"), body.String()}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release // the second event waits until the client has the first
		fmt.Fprint(w, "data: second\n\n")
	}))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(bearerProxy(target, "secret-token-0123456789", log.New(io.Discard, "", 0)))
	defer proxy.Close()

	req, err := http.NewRequest(http.MethodPost, proxy.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example.com"
	req.Header.Set("Origin", "http://evil.example.com")
	req.Header.Set("Authorization", "Bearer from-the-client")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := seen{"POST", "/mcp", "evil.example.com", "http://evil.example.com", "Bearer secret-token-0123456789", `{"jsonrpc":"2.0"}`}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("the server behind the proxy got (-want +got):\n%s", diff)
	}
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	close(release)
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event: got %q, %v; want it before the response ends", line, err)
	}
}
