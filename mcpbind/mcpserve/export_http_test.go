package mcpserve

import "net/http"

// HTTPServerFor is the http.Server ListenAndServe would serve h on with
// limits l.
func HTTPServerFor(h http.Handler, l *HTTPLimits) *http.Server {
	return newHTTPServer(h, l.withDefaults())
}

// The errors Ask returns when nobody can be asked, for the tests.
var (
	ErrNoElicitation = errNoElicitation
	ErrNotServing    = errNotServing
)
