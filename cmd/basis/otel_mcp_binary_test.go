//go:build unix && !nomcp

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// basis call of an MCP tool, exported: the request is a client span under
// the execute span, and the server receives its traceparent in _meta, in
// the agent's trace.
func TestBinaryMCPCallCarriesTrace(t *testing.T) {
	rcv, url := newOTLPReceiver(t)
	dir := t.TempDir()
	ws, config := filepath.Join(dir, "ws"), filepath.Join(dir, "config")
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {}}`)
	write(t, filepath.Join(config, "mcp.json"), `{"mcpServers": {"t": {"command": "`+mcpTestServerBinary+`", "args": ["-trace", "-ids"]}}}`)
	cmd := exec.Command(basisBinary, "-C", ws, "call", "mcp__t__tracecontext", `{}`, "--approve", "allow")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + url, "TRACEPARENT=00-" + agentTrace + "-" + agentSpan + "-01"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("basis call: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var execID, clientID, clientParent string
	var client otlpSpan
	for _, sp := range rcv.spans() {
		switch sp.Name {
		case "basis.execute":
			execID = sp.id
		case "tools/call tracecontext":
			client, clientID, clientParent = sp, sp.id, sp.parentID
		}
	}
	if execID == "" || clientID == "" || clientParent != execID {
		t.Fatalf("want a tools/call tracecontext span under basis.execute; got execute %q, client %q under %q", execID, clientID, clientParent)
	}
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "network.transport": "pipe", "basis.mcp.server": "t", "gen_ai.tool.name": "tracecontext"} {
		if client.Attrs[k] != v {
			t.Errorf("tools/call span %s = %q, want %q", k, client.Attrs[k], v)
		}
	}
	// The span's jsonrpc.request.id is the id the server received the
	// request under.
	id := client.Attrs["jsonrpc.request.id"]
	if id == "" {
		t.Error("the tools/call span has no jsonrpc.request.id")
	}
	want := "traceparent=00-" + agentTrace + "-" + clientID + "-01 tracestate=<nil> id=" + id
	if got := strings.TrimSpace(stdout.String()); got != want {
		t.Errorf("the server saw %q, want the client span's %q", got, want)
	}
}

// basis serve, exported: a client's call continues the trace the client
// sent in _meta, under the request's server span, and what is left is
// exported when serve exits.
func TestBinaryServeContinuesClientTrace(t *testing.T) {
	rcv, url := newOTLPReceiver(t)
	r := newServeRig(t)
	r.env = append(r.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+url)
	s := r.serve(t, nil, "--approve", "allow")
	p := &mcp.CallToolParams{Name: "look", Arguments: map[string]any{"name": "x"}}
	p.Meta = mcp.Meta{"traceparent": "00-" + agentTrace + "-" + agentSpan + "-01"}
	res, err := s.cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("call look: %v %v\nstderr:\n%s", err, resultText(res), s.stderr.String())
	}
	// serve exits when its client goes; it exports what is left first.
	s.cs.Close()
	var call *otlpSpan
	for _, sp := range rcv.spans() {
		if sp.Name == "execute_tool look" {
			call = &sp
		}
	}
	if call == nil {
		t.Fatalf("no execute_tool look span exported; stderr:\n%s", s.stderr.String())
	}
	// Under the server span of the request, which is under the client's
	// (otel_serve_binary_test.go looks at it closely).
	if call.traceID != agentTrace || call.Parent != "tools/call look" {
		t.Errorf("execute_tool look is in trace %s under %q, want the client's %s under tools/call look", call.traceID, call.Parent, agentTrace)
	}
}
