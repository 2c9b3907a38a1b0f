//go:build unix && !nomcp

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// basis call of an MCP tool, exported: the server receives the execute
// span's traceparent in _meta, in the agent's trace.
func TestBinaryMCPCallCarriesTrace(t *testing.T) {
	rcv, url := newOTLPReceiver(t)
	dir := t.TempDir()
	ws, config := filepath.Join(dir, "ws"), filepath.Join(dir, "config")
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {}}`)
	write(t, filepath.Join(config, "mcp.json"), `{"mcpServers": {"t": {"command": "`+mcpTestServerBinary+`", "args": ["-trace"]}}}`)
	cmd := exec.Command(basisBinary, "-C", ws, "call", "mcp__t__tracecontext", `{}`, "--approve", "allow")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + url, "TRACEPARENT=00-" + agentTrace + "-" + agentSpan + "-01"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("basis call: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var execID string
	for _, s := range rcv.spans() {
		if s.Name == "basis.execute" {
			execID = s.id
		}
	}
	want := "traceparent=00-" + agentTrace + "-" + execID + "-01 tracestate=<nil>"
	if execID == "" || strings.TrimSpace(stdout.String()) != want {
		t.Errorf("the server saw %q, want %q", strings.TrimSpace(stdout.String()), want)
	}
}
