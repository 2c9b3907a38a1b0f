//go:build unix

package mcpbind_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenGate is an in-memory server whose handling of
// subscriptions/listen waits until the test releases it: the server has
// read the request, and has not yet subscribed the session.
type listenGate struct {
	srv       *mcp.Server
	listening chan struct{} // closed when the server reads the request
	release   chan struct{} // closed by the test
	// listedEarly: a tools/list came while the server had not
	// subscribed the session.
	listedEarly atomic.Bool
}

func newListenGate(t *testing.T, m *mcpbind.Manager) *listenGate {
	g := &listenGate{listening: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	var once sync.Once
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		g.srv = testserver.New(testserver.Options{})
		g.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					select {
					case <-g.release:
					default:
						g.listedEarly.Store(true)
					}
				}
				if method == "subscriptions/listen" {
					once.Do(func() { close(g.listening) })
					select {
					case <-g.release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return next(ctx, method, req)
			}
		})
		if _, err := g.srv.Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	return g
}

// addLate adds the tool "late" to the server while it has not
// subscribed the session, and returns once the server has announced the
// change: to a session of protocol 2025-11-25 opened for the purpose,
// which needs no subscription, and to no session of basis's.
func (g *listenGate) addLate(t *testing.T) {
	announced := make(chan struct{}, 1)
	client, server := mcp.NewInMemoryTransports()
	if _, err := g.srv.Connect(context.Background(), server, nil); err != nil {
		t.Fatal(err)
	}
	witness, err := mcp.NewClient(&mcp.Implementation{Name: "witness", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case announced <- struct{}{}:
			default:
			}
		},
	}).Connect(context.Background(), client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer witness.Close()
	g.srv.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
		})
	select {
	case <-announced:
	case <-time.After(30 * time.Second): // a bound, not a wait
		t.Fatal("the server never announced the new tool")
	}
}

func serves(tools []contract.ExecutableTool, name string) bool {
	return slices.Contains(toolNames(tools), mcpbind.ToolName("s", name))
}

// From protocol 2026-07-28 on, the SDK's Connect asks for
// tools/list_changed and returns before the server has subscribed the
// session; a tool the server adds in between is announced to no one.
// The first list is read once the server says it listens, so it holds
// that tool.
func TestFirstListWaitsForTheServerToListen(t *testing.T) {
	m := newManager(t, nil, mcpbind.ServerConfig{Name: "s", Command: "x"})
	g := newListenGate(t, m)
	type listed struct {
		tools []contract.ExecutableTool
		err   error
	}
	done := make(chan listed, 1)
	go func() {
		tools, err := m.ServerTools(context.Background(), "s")
		done <- listed{tools, err}
	}()
	<-g.listening
	g.addLate(t)
	close(g.release)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if g.listedEarly.Load() {
		t.Error("the tools were listed before the server subscribed the session")
	}
	if !serves(got.tools, "late") {
		t.Errorf("the first list misses the tool the server added before it listened: %v", toolNames(got.tools))
	}
}

// A server that does not say it listens is listed anyway, after a while;
// when it says so later, its tools are read again, with what it changed
// meanwhile unannounced.
func TestAServerSlowToListenIsListedAndReadAgain(t *testing.T) {
	t.Cleanup(mcpbind.SetListenWait(time.Millisecond))
	changed := make(chan []contract.ExecutableTool, 4)
	m := newManager(t, &mcpbind.ManagerOptions{OnToolsChanged: func(_ string, tools []contract.ExecutableTool) { changed <- tools }},
		mcpbind.ServerConfig{Name: "s", Command: "x"})
	g := newListenGate(t, m)
	tools, err := m.ServerTools(context.Background(), "s")
	if err != nil {
		t.Fatalf("a server that had not said it listens did not start: %v", err)
	}
	if serves(tools, "late") {
		t.Fatal("the tool is there before it was added")
	}
	<-g.listening
	g.addLate(t)
	close(g.release)
	select {
	case tools = <-changed:
	case <-time.After(30 * time.Second): // a bound, not a wait
		t.Fatal("the tools were not read again once the server listened")
	}
	if !serves(tools, "late") {
		t.Errorf("read again: %v, without the tool added before the server listened", toolNames(tools))
	}
}
