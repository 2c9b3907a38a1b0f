package mcpserve_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireClient connects one more client of version to the gateway's server
// and returns it with what the server sent it, one JSON-RPC message per
// response id.
func wireClient(t *testing.T, g *gateway, version string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(ctx, st) }()
	wire := &lockedBuffer{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "v0"}, nil).Connect(ctx,
		&mcp.LoggingTransport{Transport: ct, Writer: wire}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-served })
	return cs, wire
}

// received returns the messages the client read off the wire
// (LoggingTransport's "read: " lines), decoded.
func received(t *testing.T, wire *lockedBuffer) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for line := range strings.Lines(wire.String()) {
		body, ok := strings.CutPrefix(line, "read: ")
		if !ok {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("the client read %q: %v", body, err)
		}
		out = append(out, m)
	}
	return out
}

// A 2026-07-28 client gets "resultType": "complete" in every result of a
// call, read or get basis answers itself (the SDK writes it only into
// its own handlers' results), and the lists basis aggregates from its
// servers say how they may be cached; a resource that is not there is
// named in the error's data (SEP-2164). An older client's results stay as
// they were.
func TestResultsSayTheyAreComplete(t *testing.T) {
	tests := []struct {
		version   string
		wantType  string // the results' resultType; "" for none
		wantScope string
	}{
		{"2026-07-28", `"complete"`, `"private"`},
		{"2025-11-25", "", `"private"`},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			g := newGateway(t, nil, allowAll, nil, "docs")
			cs, wire := wireClient(t, g, tt.version)
			ctx := context.Background()
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ReadmeURI}); err != nil {
				t.Fatalf("read: %v", err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__docs__summarize", Arguments: map[string]string{"topic": "tides"}}); err != nil {
				t.Fatalf("prompt: %v", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err != nil {
				t.Fatalf("an unknown tool: %v", err)
			}
			for _, list := range []func() error{
				func() error { _, err := cs.ListResources(ctx, nil); return err },
				func() error { _, err := cs.ListResourceTemplates(ctx, nil); return err },
				func() error { _, err := cs.ListPrompts(ctx, nil); return err },
			} {
				if err := list(); err != nil {
					t.Fatalf("list: %v", err)
				}
			}
			missing := "file:///no-such-file.md"
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: missing})
			if err == nil {
				t.Fatal("reading a missing resource succeeded")
			}
			var got []string
			var data []json.RawMessage
			for _, m := range received(t, wire) {
				if e, ok := m["error"]; ok {
					var wireErr struct{ Data json.RawMessage }
					if err := json.Unmarshal(e, &wireErr); err != nil {
						t.Fatal(err)
					}
					data = append(data, wireErr.Data)
					continue
				}
				var res map[string]json.RawMessage
				if json.Unmarshal(m["result"], &res) != nil {
					continue
				}
				switch {
				case res["contents"] != nil, res["messages"] != nil, res["content"] != nil:
					got = append(got, "result "+string(res["resultType"]))
				case res["resources"] != nil, res["resourceTemplates"] != nil, res["prompts"] != nil:
					got = append(got, "list "+string(res["cacheScope"]))
				}
			}
			want := []string{"result " + tt.wantType, "result " + tt.wantType, "result " + tt.wantType,
				"list " + tt.wantScope, "list " + tt.wantScope, "list " + tt.wantScope}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s\nwire:\n%s", diff, wire.String())
			}
			if diff := cmp.Diff([]string{`{"uri":"` + missing + `"}`}, rawStrings(data)); diff != "" {
				t.Errorf("the missing resource's error data (-want +got):\n%s", diff)
			}
		})
	}
}

func rawStrings(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
