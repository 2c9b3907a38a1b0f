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
func bearerProxy(target *url.URL, token string, errLog *log.Logger) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
		ErrorLog:      errLog,
	}
}
