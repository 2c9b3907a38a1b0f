// Command oauthbrowser is the browser of basis's sign-in tests and of the
// client conformance run: BROWSER=oauthbrowser makes `basis mcp login`
// (or a call that needs sign-in) hand it the authorization URL, which it
// GETs, following every redirect, the last to basis's loopback callback.
//
// Usage:
//
//	oauthbrowser [-state VALUE] AUTHORIZATION_URL
//
// -state replaces the state of the redirect to /callback, as a forged
// authorization response would carry: basis must refuse it.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	state := flag.String("state", "", "replace the callback's state with `VALUE` (a forged response)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: oauthbrowser [-state VALUE] AUTHORIZATION_URL")
		os.Exit(2)
	}
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("more than 10 redirects")
		}
		if *state != "" && req.URL.Path == "/callback" {
			q := req.URL.Query()
			q.Set("state", *state)
			req.URL.RawQuery = q.Encode()
		}
		return nil
	}}
	resp, err := client.Get(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "oauthbrowser:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "oauthbrowser: the last page answered", resp.Status)
		os.Exit(1)
	}
}
