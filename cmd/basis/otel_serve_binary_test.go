//go:build unix && !nomcp

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
)

// basis serve, exported to a real OTLP/HTTP receiver, over stdio and
// HTTP: each request answered is a SERVER span "{method} {target}" in the
// MCP conventions, continuing the trace the client sent in _meta, the
// parent of the call's execute_tool span; the
// mcp.server.operation.duration histogram has the call; and nothing
// exported holds an argument's value or a credential.
func TestBinaryServeExportsServerSpans(t *testing.T) {
	eachTransport(t, testBinaryServeExportsServerSpans)
}

// answerID finds the id of a tool result's answer in the messages a
// client received.
var answerID = regexp.MustCompile(`"id":("[^"]*"|\d+),"result":\{.*"content":\[`)

func testBinaryServeExportsServerSpans(t *testing.T, overHTTP bool) {
	rcv, url := newOTLPReceiver(t)
	r := newServeRig(t)
	r.http = overHTTP
	r.env = append(r.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+url, "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer "+otelHeaderCanary)
	s := r.serve(t, nil, "--approve", "allow")
	p := &mcp.CallToolParams{Name: "look", Arguments: map[string]any{"name": otelArgCanary}}
	p.Meta = mcp.Meta{"traceparent": "00-" + agentTrace + "-" + agentSpan + "-01"}
	res, err := s.cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("call look: %v\nstderr:\n%s", err, s.stderr.String())
	}
	version, session := s.cs.InitializeResult().ProtocolVersion, s.cs.ID()
	// The id the client sent the call under is the one its answer,
	// the only tool result on the wire, carries.
	m := answerID.FindStringSubmatch(s.wire.String())
	if m == nil {
		t.Fatalf("no tools/call answer on the wire:\n%s", s.wire.String())
	}
	callID := strings.Trim(m[1], `"`)
	// serve exports what is left when it exits: over stdio when its
	// client goes, over HTTP when it is told to stop.
	s.cs.Close()
	if overHTTP {
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	s.cmd.Wait()

	transport := "pipe"
	if overHTTP {
		transport = "tcp"
	}
	var server, call *tracev1.Span
	rcv.mu.Lock()
	for _, req := range rcv.traces {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					switch sp.Name {
					case "tools/call look":
						server = sp
					case "execute_tool look":
						call = sp
					}
				}
			}
		}
	}
	rcv.mu.Unlock()
	if server == nil || call == nil {
		t.Fatalf("want a tools/call look and an execute_tool look span; got %+v\nstderr:\n%s", rcv.spans(), s.stderr.String())
	}
	if server.Kind != tracev1.Span_SPAN_KIND_SERVER {
		t.Errorf("tools/call look is of kind %v, want SERVER", server.Kind)
	}
	if got := hex.EncodeToString(server.TraceId); got != agentTrace || hex.EncodeToString(server.ParentSpanId) != agentSpan {
		t.Errorf("tools/call look is in trace %s under %x, want the client's %s under %s", got, server.ParentSpanId, agentTrace, agentSpan)
	}
	if !bytes.Equal(call.ParentSpanId, server.SpanId) || !bytes.Equal(call.TraceId, server.TraceId) {
		t.Errorf("execute_tool look is under %x in trace %x, want the server span %x", call.ParentSpanId, call.TraceId, server.SpanId)
	}
	attrs := otlpAttrs(server.Attributes)
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "look", "network.transport": transport, "mcp.protocol.version": version, "mcp.session.id": session, "jsonrpc.request.id": callID} {
		if got, ok := attrs[k]; got != v || ok != (v != "") {
			t.Errorf("tools/call look %s = %q, want %q (all: %v)", k, attrs[k], v, attrs)
		}
	}
	if _, ok := attrs["error.type"]; ok {
		t.Errorf("a call that succeeded has error.type %q", attrs["error.type"])
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	found := false
	for _, req := range rcv.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name != "mcp.server.operation.duration" || m.Unit != "s" {
						continue
					}
					for _, dp := range m.GetHistogram().GetDataPoints() {
						found = found || otlpAttrs(dp.Attributes)["mcp.method.name"] == "tools/call" && dp.GetCount() > 0
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no mcp.server.operation.duration point (s) for tools/call")
	}
	for _, body := range rcv.bodies {
		for _, c := range []string{otelArgCanary, otelHeaderCanary, canary, serveToken} {
			if bytes.Contains(body, []byte(c)) {
				t.Errorf("an exported request holds the secret %q", c)
			}
		}
	}
}
