//go:build unix

package signin_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind/signin"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// answer sends the browser to flow's redirect with query q, as the
// authorization server's redirect would, and returns the page's status.
func answer(t *testing.T, flow *signin.Flow, q url.Values) int {
	t.Helper()
	resp, err := http.Get(flow.RedirectURL + "?" + q.Encode())
	if err != nil {
		t.Errorf("the browser reached no callback: %v", err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLoopbackTakesOnlyTheAnswerToItsRequest: the code comes back only
// with the state sent; a forged or missing state, a refusal or no code
// is an error that says what happened, with no code handed on.
func TestLoopbackTakesOnlyTheAnswerToItsRequest(t *testing.T) {
	const authURL = "https://as.example/authorize?client_id=c&state=s-1"
	tests := []struct {
		name    string
		authURL string
		query   url.Values
		want    *auth.AuthorizationResult
		wantErr string
		status  int
	}{
		{"approved", authURL, url.Values{"code": {"c-1"}, "state": {"s-1"}, "iss": {"https://as.example"}},
			&auth.AuthorizationResult{Code: "c-1", State: "s-1", Iss: "https://as.example"}, "", http.StatusOK},
		{"forged state", authURL, url.Values{"code": {"c-1"}, "state": {"forged"}}, nil, "does not carry the state basis sent", http.StatusBadRequest},
		{"no state", authURL, url.Values{"code": {"c-1"}}, nil, "does not carry the state basis sent", http.StatusBadRequest},
		{"no state was sent", "https://as.example/authorize", url.Values{"code": {"c-1"}, "state": {""}}, nil, "does not carry the state basis sent", http.StatusBadRequest},
		{"refused", authURL, url.Values{"error": {"access_denied"}, "state": {"s-1"}}, nil, "refused the sign-in (access_denied)", http.StatusBadRequest},
		{"refused with markup", authURL, url.Values{"error": {"<b>x</b>"}, "state": {"s-1"}}, nil, "refused the sign-in (an error code not shown)", http.StatusBadRequest},
		{"no code", authURL, url.Values{"state": {"s-1"}}, nil, "carries no code", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var flow *signin.Flow
			var opened []string
			status := 0
			open := func(u string) error {
				opened = append(opened, u)
				status = answer(t, flow, tt.query)
				return nil
			}
			var notified []string
			notify := func(u string, ok bool) {
				if !ok {
					t.Errorf("Notify(%q, false) though the browser opened", u)
				}
				notified = append(notified, u)
			}
			flow, err := signin.Loopback(context.Background(), "remote", &signin.LoopbackOptions{Open: open, Notify: notify})
			if err != nil {
				t.Fatal(err)
			}
			defer flow.Close()
			if !strings.HasPrefix(flow.RedirectURL, "http://127.0.0.1:") || !strings.HasSuffix(flow.RedirectURL, "/callback") {
				t.Errorf("RedirectURL %q is not a loopback /callback", flow.RedirectURL)
			}
			got, err := flow.Fetch(context.Background(), &auth.AuthorizationArgs{URL: tt.authURL})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if status != tt.status {
				t.Errorf("the browser's page: status %d, want %d", status, tt.status)
			}
			if diff := cmp.Diff([]string{tt.authURL}, opened); diff != "" {
				t.Errorf("opened (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.authURL}, notified); diff != "" {
				t.Errorf("notified (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoopbackAnswersOnce: a second response, even with the right state,
// is refused and changes nothing; once answered the port is closed.
func TestLoopbackAnswersOnce(t *testing.T) {
	var flow *signin.Flow
	var statuses []int
	open := func(string) error {
		for _, code := range []string{"first", "second"} {
			statuses = append(statuses, answer(t, flow, url.Values{"code": {code}, "state": {"s"}}))
		}
		return nil
	}
	flow, err := signin.Loopback(context.Background(), "remote", &signin.LoopbackOptions{Open: open, Notify: func(string, bool) {}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := flow.Fetch(context.Background(), &auth.AuthorizationArgs{URL: "https://as.example/a?state=s"})
	if err != nil || res.Code != "first" {
		t.Fatalf("Fetch = %+v, %v; want the first code", res, err)
	}
	if diff := cmp.Diff([]int{http.StatusOK, http.StatusGone}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if resp, err := http.Get(flow.RedirectURL); err == nil {
		resp.Body.Close()
		t.Errorf("the port still answers after the sign-in: %s", resp.Status)
	}
}

// TestLoopbackWithoutABrowser: with no opener, or one that fails, the
// operator is told the address (and opens it by hand).
func TestLoopbackWithoutABrowser(t *testing.T) {
	tests := []struct {
		name string
		open func(string) error
	}{
		{"no opener", nil},
		{"opener fails", func(string) error { return os.ErrNotExist }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var flow *signin.Flow
			var told []string
			notify := func(u string, opened bool) {
				if opened {
					t.Errorf("Notify says the browser opened")
				}
				told = append(told, u)
				answer(t, flow, url.Values{"code": {"c"}, "state": {"s"}}) // the operator, by hand
			}
			flow, err := signin.Loopback(context.Background(), "remote", &signin.LoopbackOptions{Open: tt.open, Notify: notify})
			if err != nil {
				t.Fatal(err)
			}
			defer flow.Close()
			const u = "https://as.example/a?state=s"
			if res, err := flow.Fetch(context.Background(), &auth.AuthorizationArgs{URL: u}); err != nil || res.Code != "c" {
				t.Errorf("Fetch = %+v, %v", res, err)
			}
			if diff := cmp.Diff([]string{u}, told); diff != "" {
				t.Errorf("told (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoopbackWaitEnds: no answer within the wait is an error that says
// so, and the port is closed; so does Close before any answer.
func TestLoopbackWaitEnds(t *testing.T) {
	flow, err := signin.Loopback(context.Background(), "remote", &signin.LoopbackOptions{Notify: func(string, bool) {}, Wait: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = flow.Fetch(context.Background(), &auth.AuthorizationArgs{URL: "https://as.example/a?state=s"})
	if err == nil || !strings.Contains(err.Error(), "no answer came back from the browser within 1ns") {
		t.Errorf("error %v, want the wait's end", err)
	}
	if resp, err := http.Get(flow.RedirectURL); err == nil {
		resp.Body.Close()
		t.Errorf("the port still answers after the wait: %s", resp.Status)
	}

	flow, err = signin.Loopback(context.Background(), "remote", nil)
	if err != nil {
		t.Fatal(err)
	}
	flow.Close()
	if resp, err := http.Get(flow.RedirectURL); err == nil {
		resp.Body.Close()
		t.Errorf("the port still answers after Close: %s", resp.Status)
	}
}

// TestBrowser: $BROWSER's first command, with the URL for %s or last;
// none when it cannot be found or nothing names a browser.
func TestBrowser(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS always has open")
	}
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const u = "https://as.example/a?state=s"
	tests := []struct {
		name    string
		environ []string
		want    string // the browser's arguments, "|"-ended; "" means no browser
	}{
		{"nothing", []string{"PATH=/usr/bin:/bin"}, ""},
		{"not found", []string{"PATH=/nonexistent", "BROWSER=no-such-browser"}, ""},
		{"URL last", []string{"BROWSER=" + script + " --new-window"}, "--new-window|" + u + "|"},
		{"URL for %s, first command", []string{"BROWSER=" + script + " --url=%s:firefox"}, "--url=" + u + "|"},
		{"the last BROWSER", []string{"BROWSER=no-such-browser", "BROWSER=" + script}, u + "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			open := signin.Browser(tt.environ, w)
			if tt.want == "" {
				w.Close()
				if open != nil {
					t.Errorf("Browser found one in %q", tt.environ)
				}
				return
			}
			if open == nil {
				w.Close()
				t.Fatalf("Browser found none in %q", tt.environ)
			}
			err = open(u)
			w.Close() // the browser holds its own copy until it exits
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
		})
	}
}
