//go:build unix && !nomcp

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/contract/display"
	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostile is what a call can carry to change how a question reads:
// a right-to-left override, isolates, invisible characters and an escape
// sequence that would erase the line above.
const hostile = "\u202e\u2066x\u2069\u2067\u2068 \u200b\u200e\u200f\ufeff \x1b[2K\x1b[1A"

// bidiToolName is the tool mcpbind's test server adds with -bidi
// (testserver.BidiToolName, in a package internal to mcpbind).
const bidiToolName = "list\u202eeteled\u2066\u2069\u200b\u200e\u200f\ufeff\x1b[2K"

// TestServeApprovalFormIsEscaped: through the built basis serve, a spawn
// body, a declared tool's arguments and an MCP tool's name (with a title
// and description to match) reach the client's approval form escaped, so
// nothing in them can change how the form reads.
func TestServeApprovalFormIsEscaped(t *testing.T) {
	r := newServeRig(t)
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"odd": {"command": %q, "args": ["-bidi"]}}}`, mcpTestServerBinary))
	asked := make(chan string, 8)
	s := r.serve(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	calls := []struct {
		name string
		args map[string]any
		also string // what else the form must show escaped
	}{
		{"spawn", map[string]any{"input": "!echo " + hostile}, "echo "},
		{"deploy", map[string]any{"note": hostile}, "deploy"},
		{mcpbind.ToolName("odd", bidiToolName), map[string]any{"note": hostile}, `"tool":"list\u202eeteled\u2066\u2069\u200b\u200e\u200f\ufeff`},
	}
	for _, c := range calls {
		text, isErr := s.call(t, c.name, c.args)
		if !isErr {
			t.Fatalf("%s ran though the form was declined: %q", c.name, text)
		}
		var msg string
		select {
		case msg = <-asked:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no question reached the client (%q); stderr:\n%s", c.name, text, s.stderr.String())
		}
		for _, line := range strings.Split(msg, "\n") {
			for _, r := range line {
				if !display.Shown(r) {
					t.Errorf("%s: the form holds %U:\n%s", c.name, r, msg)
				}
			}
		}
		if !strings.Contains(msg, `\u202e\u2066x\u2069\u2067\u2068 \u200b\u200e\u200f\ufeff`) {
			t.Errorf("%s: the form does not show the characters escaped:\n%s", c.name, msg)
		}
		if !strings.Contains(msg, c.also) {
			t.Errorf("%s: the form does not show %q:\n%s", c.name, c.also, msg)
		}
	}
}
