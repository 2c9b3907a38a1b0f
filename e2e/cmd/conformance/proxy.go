package main

import (
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// bearerProxy forwards every request to target with "Authorization:
// Bearer token" added, since the conformance suite sends no token and
// basis serve refuses a request without one. Everything else passes as it
// came — the Host and Origin headers included, which the suite's DNS
// rebinding checks set on purpose — and responses stream (an SSE event
// reaches the suite when basis sends it). Its own errors (a stream cut
// when basis stops, say) go to errLog.
//
// It runs full duplex: by default Go's server reads away and closes a
// request's unread body when the handler starts its response, and basis
// answers a short request within microseconds of its last byte, while the
// proxy's transport may still be reading that body (for its end). That
// read then fails, the transport drops its connection to basis, and the
// suite gets a response cut mid-stream, which its raw-HTTP scenarios
// (http-header-validation) wait on for ever.
func bearerProxy(target *url.URL, token string, errLog *log.Logger) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
		ErrorLog:      errLog,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			errLog.Printf("full duplex: %v", err)
		}
		rp.ServeHTTP(w, r)
	})
}
