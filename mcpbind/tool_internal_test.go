//go:build unix

package mcpbind

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTool binds one tool of a server configured as cfg, without
// starting anything.
func testTool(t *testing.T, cfg ServerConfig, rt *mcp.Tool) *Tool {
	t.Helper()
	s := &server{cfg: cfg, subject: serverSubject(cfg), definition: serverDefinition(cfg)}
	tool, err := s.newTool(cfg.exposedName(rt.Name), rt)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// The preview's subject, whose parts around the arguments are made once
// per tool, is byte for byte the canonical JSON of the whole subject, as
// the gate's rules and approvals read it.
func TestPreviewSubjectIsCanonical(t *testing.T) {
	stdio := ServerConfig{Name: "s<&>", Type: TypeStdio, Command: "bin/srv", Args: []string{"--x=é", "a\"b"}}
	remote := ServerConfig{Name: "web", Type: TypeHTTP, URL: "https://user:pw@example.com/mcp?key=secret"}
	tests := []struct {
		name  string
		cfg   ServerConfig
		tool  *mcp.Tool
		input string
	}{
		{"no annotations", stdio, &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, `{}`},
		{"annotations", stdio, &mcp.Tool{Name: "t<b>", Annotations: &mcp.ToolAnnotations{Title: "A & <B>", ReadOnlyHint: true}}, `{"z":1,"a":[1.50,"<&>"],"m":{"y":null,"x":true}}`},
		{"http server", remote, &mcp.Tool{Name: "fetch"}, `{"url":"http://x/?a=1&b=2","n":1e3,"s":"\u00e9\ud83d\ude00"}`},
		{"empty input", remote, &mcp.Tool{Name: "fetch"}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := testTool(t, tt.cfg, tt.tool)
			for range 2 { // the first call makes the parts, the second reuses them
				p, err := tool.AuthorizationPreview(context.Background(), contract.Call{Input: json.RawMessage(tt.input)})
				if err != nil {
					t.Fatal(err)
				}
				args, err := contract.CanonicalInput(json.RawMessage(tt.input))
				if err != nil {
					t.Fatal(err)
				}
				want, err := contract.CanonicalJSON(map[string]any{"annotations": tool.annotations, "arguments": args, "server": tool.srv.subject, "tool": tool.remote})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), string(p.Subject)); diff != "" {
					t.Errorf("subject (-canonical +got):\n%s", diff)
				}
			}
		})
	}
}

// A tool's definition is made once per set of server files: a call
// reuses it, and a server started again with other files gets a new one.
func TestDefinitionFollowsTheServersFiles(t *testing.T) {
	tool := testTool(t, ServerConfig{Name: "s", Type: TypeStdio, Command: "bin/srv"}, &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}})
	want := func(files map[string]string) string {
		t.Helper()
		if files == nil {
			files = map[string]string{} // a server without files lists none
		}
		b, err := contract.CanonicalJSON(map[string]any{"annotations": tool.annotations, "files": files, "input_schema": tool.desc.InputSchema, "server": tool.srv.definition, "tool": tool.remote})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, files := range []map[string]string{nil, {"bin/srv": "sha256:1"}, {"bin/srv": "sha256:2"}} {
		tool.srv.mu.Lock()
		tool.srv.files = files
		tool.srv.mu.Unlock()
		for range 2 {
			def, err := tool.Definition(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want(files), string(def)); diff != "" {
				t.Errorf("definition with files %v (-want +got):\n%s", files, diff)
			}
			def[0] = 'X' // a caller's copy: the next call is not disturbed
		}
	}
	// A call with the files unchanged canonicalises nothing: one copy of
	// the definition is all it allocates.
	if n := testing.AllocsPerRun(50, func() { tool.Definition(context.Background()) }); n > 1 {
		t.Errorf("Definition allocated %v times a call with the files unchanged; want 1 (the copy)", n)
	}
}
