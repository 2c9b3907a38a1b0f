//go:build unix

package mcpbind_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inMemory makes m reach every server through an in-memory transport to
// a fresh testserver.
func inMemory(t testing.TB, m *mcpbind.Manager, opts testserver.Options) {
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := testserver.New(opts).Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
}

func TestDescriptorAndPreview(t *testing.T) {
	tests := []struct {
		name        string
		server      mcpbind.ServerConfig
		remote      string
		input       string
		wantEffect  contract.SideEffect
		wantDesc    string
		wantSubject string
		wantSummary string
	}{{
		name:        "readOnlyHint ignored without trust",
		server:      mcpbind.ServerConfig{Name: "gh", Command: "npx", Args: []string{"-y", "server-github", "--token-file", "${HOME}/t"}, Env: mcpbind.NewValues(map[string]string{"GITHUB_TOKEN": "ghp_secretvalue"})},
		remote:      "echo",
		input:       `{"z": 1, "a": "&&"}`,
		wantEffect:  contract.SideEffectExternal,
		wantDesc:    "Echo: Echoes its arguments.",
		wantSubject: `{"annotations":{"idempotentHint":false,"readOnlyHint":true,"title":"Echo"},"arguments":{"a":"&&","z":1},"server":{"command":["npx","-y","server-github","--token-file","${HOME}/t"],"name":"gh","type":"stdio"},"tool":"echo"}`,
		wantSummary: `call tool "echo" of MCP server "gh" (npx -y server-github --token-file ${HOME}/t)`,
	}, {
		name:        "readOnlyHint trusted",
		server:      mcpbind.ServerConfig{Name: "gh", Command: "srv", TrustAnnotations: true},
		remote:      "echo",
		input:       `{}`,
		wantEffect:  contract.SideEffectNone,
		wantDesc:    "Echo: Echoes its arguments.",
		wantSubject: `{"annotations":{"idempotentHint":false,"readOnlyHint":true,"title":"Echo"},"arguments":{},"server":{"command":["srv"],"name":"gh","type":"stdio"},"tool":"echo"}`,
		wantSummary: `call tool "echo" of MCP server "gh" (srv)`,
	}, {
		name:        "no annotations, url without query or user info",
		server:      mcpbind.ServerConfig{Name: "api", Type: "http", URL: "https://user:pw@api.example/mcp?key=${KEY:-k}#frag", TrustAnnotations: true, Headers: mcpbind.NewValues(map[string]string{"Authorization": "Bearer x"})},
		remote:      "fail",
		input:       ``,
		wantEffect:  contract.SideEffectExternal,
		wantDesc:    "Always reports an error.",
		wantSubject: `{"annotations":null,"arguments":{},"server":{"name":"api","type":"http","url":"https://api.example/mcp"},"tool":"fail"}`,
		wantSummary: `call tool "fail" of MCP server "api" (https://api.example/mcp)`,
	}, {
		name:        "no description",
		server:      mcpbind.ServerConfig{Name: "s", Command: "srv"},
		remote:      "quiet",
		input:       `{}`,
		wantEffect:  contract.SideEffectExternal,
		wantDesc:    "Tool quiet of MCP server s.",
		wantSubject: `{"annotations":null,"arguments":{},"server":{"command":["srv"],"name":"s","type":"stdio"},"tool":"quiet"}`,
		wantSummary: `call tool "quiet" of MCP server "s" (srv)`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, &mcpbind.ManagerOptions{}, tt.server)
			inMemory(t, m, testserver.Options{})
			tl := tool(t, m, tt.server.Name, tt.remote)
			d := tl.Descriptor()
			if d.SideEffect != tt.wantEffect || d.Binding != contract.BindingMCP || d.Source != "host#"+tt.server.Name || d.Description != tt.wantDesc {
				t.Errorf("descriptor = %+v", d)
			}
			if diff := cmp.Diff(`{"type":"object"}`, string(d.InputSchema)); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			p, err := tl.AuthorizationPreview(context.Background(), contract.Call{Input: []byte(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSubject, string(p.Subject)); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSummary, p.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if p.SideEffect != tt.wantEffect {
				t.Errorf("preview side effect = %v", p.SideEffect)
			}
			if strings.Contains(string(p.Subject), "secretvalue") || strings.Contains(string(p.Subject), "Bearer") {
				t.Errorf("subject carries a credential: %s", p.Subject)
			}
		})
	}
}

func TestPreviewRefusesAmbiguousInput(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	inMemory(t, m, testserver.Options{})
	tl := tool(t, m, "s", "echo")
	for _, in := range []string{`{"a":1,"a":2}`, `{"k":1,"K":2}`, `"x"`, `{`} {
		if _, err := tl.AuthorizationPreview(context.Background(), contract.Call{Input: []byte(in)}); !errorsIs(err, contract.ErrInvalidInput) {
			t.Errorf("preview of %s = %v, want ErrInvalidInput", in, err)
		}
		if _, err := tl.Execute(context.Background(), contract.Call{Input: []byte(in)}); !errorsIs(err, contract.ErrInvalidInput) {
			t.Errorf("execute of %s = %v, want ErrInvalidInput", in, err)
		}
	}
}

func TestConcurrentCallsInMemory(t *testing.T) {
	m := newManager(t, &mcpbind.ManagerOptions{}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	inMemory(t, m, testserver.Options{})
	tl := tool(t, m, "s", "echo")
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			in, _ := json.Marshal(map[string]int{"i": i})
			res, err := call(t, tl, string(in))
			if err == nil && res.Text != "echo "+string(in) {
				err = errorf("call %d read %q", i, res.Text)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestHTTPServers(t *testing.T) {
	srv := testserver.New(testserver.Options{PageSize: 2})
	get := func(*http.Request) *mcp.Server { return srv }
	// Registered before the Manager, so cleanup closes the Manager (and
	// its long-lived streams) first.
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(get, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(get, nil))
	t.Cleanup(sse.Close)
	m := newManager(t, &mcpbind.ManagerOptions{Lookup: func(n string) (string, bool) { return "platform-team", n == "TEAM" }},
		mcpbind.ServerConfig{Name: "web", Type: "http", URL: streamable.URL + "?v=1", Headers: mcpbind.NewValues(map[string]string{"X-Team": "${TEAM}"})},
		mcpbind.ServerConfig{Name: "old", Type: "sse", URL: sse.URL},
	)
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, st := range m.Status() {
		if st.String() != "connected, 13 tools" {
			t.Errorf("%s: %s", st.Server, st)
		}
	}
	for _, server := range []string{"web", "old"} {
		res, err := call(t, tool(t, m, server, "echo"), `{"over":"`+server+`"}`)
		if err != nil || res.Text != `echo {"over":"`+server+`"}` {
			t.Errorf("%s echo: %q, %v", server, res.Text, err)
		}
	}
	// The header reached the server, and what the server says back about
	// it is redacted.
	_, err := call(t, tool(t, m, "web", "header"), `{"Name":"X-Team"}`)
	if err == nil || !strings.Contains(err.Error(), "got [redacted]") {
		t.Errorf("header call = %v, want the server to have received the header", err)
	}
}

// TestRestartWithOtherTools: a server that ended is started again for the
// next call, and when it comes back with other tools the host hears of it.
func TestRestartWithOtherTools(t *testing.T) {
	changed := make(chan []string, 2)
	m := newManager(t, &mcpbind.ManagerOptions{OnToolsChanged: func(source string, tools []contract.ExecutableTool) {
		// The source is the one a runtime replaces the server's tools by.
		if source != "host#s" || tools[0].Descriptor().Source != source {
			t.Errorf("OnToolsChanged's source %q, the tools' %q; want host#s for both", source, tools[0].Descriptor().Source)
		}
		changed <- toolNames(tools)
	}}, mcpbind.ServerConfig{Name: "s", Command: "x"})
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		mu.Lock()
		defer mu.Unlock()
		client, server := mcp.NewInMemoryTransports()
		ss, err := testserver.New(testserver.Options{Extra: len(sessions)}).Connect(context.Background(), server, nil)
		if err != nil {
			t.Errorf("server Connect: %v", err)
		}
		sessions = append(sessions, ss)
		return client
	})
	echo := tool(t, m, "s", "echo")
	mu.Lock()
	sessions[0].Close() // the server goes away between calls
	mu.Unlock()
	res, err := call(t, echo, `{"n":1}`)
	for i := 0; err != nil && i < 50; i++ {
		// The client may not have seen the end yet: this call fails
		// (it is never retried) and the next one restarts.
		time.Sleep(20 * time.Millisecond)
		res, err = call(t, echo, `{"n":1}`)
	}
	if err != nil || res.Text != `echo {"n":1}` {
		t.Fatalf("the call after the server went away: %q, %v", res.Text, err)
	}
	select {
	case names := <-changed:
		if !slices.Contains(names, "mcp__s__extra00") {
			t.Errorf("the restarted server's tools %v lack mcp__s__extra00", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnToolsChanged was not called after the restart")
	}
}
