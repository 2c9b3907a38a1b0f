//go:build unix && !nomcp

package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The form an MCP client shows for !git status warns about what the
// repository's git config makes git run.
func TestElicitationShowsGitConfigPrograms(t *testing.T) {
	ws, config := gitWorkspace(t, fsmonitorConfig)
	r := &serveRig{ws: ws, config: config, env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config}}
	var mu sync.Mutex
	var messages []string
	s := r.serve(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	if text, isErr := s.call(t, "spawn", map[string]any{"input": "!git status"}); !isErr {
		t.Errorf("declined, yet it ran: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(messages) != 1 || !strings.Contains(messages[0], "Warning: "+fsmonitorFound+"\n") {
		t.Errorf("the form does not warn about core.fsmonitor: %q", messages)
	}
}
