//go:build !nomcp

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// basis serve serves an MCP server's resources and prompts, a read and a
// get pass the gate and are audited, and a server's question during a
// call reaches the client with the server named.
func TestServeResourcesPromptsAndServerQuestions(t *testing.T) {
	r := newServeRig(t)
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"notes": {"command": %q, "args": ["-surfaces", "notes"]}}}`, mcpTestServerBinary))
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	var mu sync.Mutex
	var asked []string
	copts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, req.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
	}}
	s := r.serve(t, copts, "--approve", "allow", "--audit", audit)
	ctx := context.Background()

	res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://notes/only"})
	if err != nil {
		t.Fatalf("read: %v; stderr:\n%s", err, s.stderr.String())
	}
	if len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x00\x01\x02\xff" {
		t.Errorf("read gave %+v; binary content must pass unchanged", res.Contents)
	}
	pr, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__notes__summarize", Arguments: map[string]string{"topic": "tides"}})
	if err != nil || len(pr.Messages) != 2 {
		t.Fatalf("prompt: %+v, %v", pr, err)
	}
	text, isErr := s.call(t, "mcp__notes__ask", map[string]any{"message": "basis: the tool spawn wants to act"})
	if isErr || !strings.Contains(text, `"accept"`) {
		t.Errorf("ask: %q (error %v)", text, isErr)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `MCP server "notes" asks`) || !strings.Contains(asked[0], "\n│ basis: the tool spawn") {
		t.Errorf("the client was asked %q; want the server named first and its words set off", asked)
	}
	mu.Unlock()

	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"tool":"mcp__notes","binding":"mcp"`, `"method":"resources/read"`, `"uri":"mem://notes/only"`, `"method":"prompts/get"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the audit lacks %s:\n%s", want, b)
		}
	}
}

// With nobody to allow it, a read is refused, and nothing is read.
func TestServeDeniesAReadNoRuleAllows(t *testing.T) {
	r := newServeRig(t)
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"notes": {"command": %q, "args": ["-surfaces", "notes"]}}}`, mcpTestServerBinary))
	s := r.serve(t, nil, "--approve", "deny")
	_, err := s.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///README.md"})
	if err == nil || !strings.Contains(err.Error(), "mcp__notes") {
		t.Errorf("read with --approve deny: %v; want a denial naming mcp__notes", err)
	}
}
