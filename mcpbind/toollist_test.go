//go:build unix

package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lister answers tools/list one page at a time, whatever the SDK's server
// would have said: page n is the tools and next cursor it returns.
type lister func(cursor string) (tools []*mcp.Tool, next string)

// listingServer is an in-memory MCP server whose tools/list is list (or,
// while list is nil, the server's own), with one real tool, echo.
func listingServer(list *atomic.Pointer[lister]) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "lister", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			l := list.Load()
			if method != "tools/list" || l == nil {
				return next(ctx, method, req)
			}
			tools, cursor := (*l)(req.(*mcp.ListToolsRequest).Params.Cursor)
			return &mcp.ListToolsResult{Tools: tools, NextCursor: cursor}, nil
		}
	})
	return s
}

func smallTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// Servers that hand over more than any real server would.
var (
	// endless pages forever, a new cursor and a new tool each page.
	endless lister = func(cursor string) ([]*mcp.Tool, string) {
		n, _ := strconv.Atoi(cursor)
		return []*mcp.Tool{smallTool("t" + strconv.Itoa(n))}, strconv.Itoa(n + 1)
	}
	// repeating sends the same cursor on every page.
	repeating lister = func(string) ([]*mcp.Tool, string) {
		return []*mcp.Tool{smallTool("t")}, "again"
	}
	// huge sends pages of tools whose descriptions are 1 MiB each.
	huge lister = func(cursor string) ([]*mcp.Tool, string) {
		n, _ := strconv.Atoi(cursor)
		var tools []*mcp.Tool
		for i := range 4 {
			t := smallTool(fmt.Sprintf("t%d_%d", n, i))
			t.Description = strings.Repeat("d", 1<<20)
			tools = append(tools, t)
		}
		return tools, strconv.Itoa(n + 1)
	}
	// many sends pages of 1,000 tools each.
	many lister = func(cursor string) ([]*mcp.Tool, string) {
		n, _ := strconv.Atoi(cursor)
		var tools []*mcp.Tool
		for i := range 1000 {
			tools = append(tools, smallTool(fmt.Sprintf("t%d_%d", n, i)))
		}
		return tools, strconv.Itoa(n + 1)
	}
	// hugeCursor sends cursors of 1 MiB, each new.
	hugeCursor lister = func(cursor string) ([]*mcp.Tool, string) {
		n, _ := strconv.Atoi(strings.TrimRight(cursor, "c"))
		return nil, strconv.Itoa(n+1) + strings.Repeat("c", 1<<20)
	}
)

// TestToolListIsBounded: a server whose tools/list would never end, or
// would hand over more than basis can hold, fails to start with an error
// naming the server and the bound, and the calls the Manager has read
// stop there.
func TestToolListIsBounded(t *testing.T) {
	tests := []struct {
		name  string
		list  lister
		says  string
		pages int64 // the most tools/list requests the server may see
	}{
		{"endless", endless, "it has more than 100 pages of tools", 100},
		{"repeating", repeating, "it sent the same tools/list cursor twice (on page 2), which would page forever", 2},
		{"huge", huge, "its tool definitions are larger than 16 MiB", 5},
		{"many", many, "it offers more than 10000 tools", 11},
		{"huge cursors", hugeCursor, "its tool definitions are larger than 16 MiB", 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list atomic.Pointer[lister]
			list.Store(&tt.list)
			var requests atomic.Int64
			// A slow machine (the race detector, 16 MiB of cursors) must not
			// turn the bound into the start's deadline.
			m := newManager(t, &mcpbind.ManagerOptions{}, mcpbind.ServerConfig{Name: "greedy", Command: "x", StartupTimeout: 10 * time.Minute})
			mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
				client, server := mcp.NewInMemoryTransports()
				s := listingServer(&list)
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "tools/list" {
							requests.Add(1)
						}
						return next(ctx, method, req)
					}
				})
				if _, err := s.Connect(context.Background(), server, nil); err != nil {
					t.Errorf("server Connect: %v", err)
				}
				return client
			})
			tools, err := m.ServerTools(t.Context(), "greedy")
			var se *mcpbind.ServerError
			if !errors.As(err, &se) || !errors.Is(err, mcpbind.ErrToolListBound) || se.Server != "greedy" {
				t.Fatalf("ServerTools = %d tools, %v; want a *ServerError for greedy wrapping ErrToolListBound", len(tools), err)
			}
			want := `MCP server "greedy": start: listing its tools failed: ` + tt.says
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if n := requests.Load(); n > tt.pages {
				t.Errorf("the server was asked for %d pages; the bound allows %d", n, tt.pages)
			}
		})
	}
}

// TestToolListWithinTheBoundsIsRead: a server using every page and tool
// the bounds allow is read whole.
func TestToolListWithinTheBoundsIsRead(t *testing.T) {
	var full lister = func(cursor string) ([]*mcp.Tool, string) {
		n, _ := strconv.Atoi(cursor)
		var tools []*mcp.Tool
		for i := range 100 {
			tools = append(tools, smallTool(fmt.Sprintf("t%d_%d", n, i)))
		}
		if n == 99 {
			return tools, ""
		}
		return tools, strconv.Itoa(n + 1)
	}
	var list atomic.Pointer[lister]
	list.Store(&full)
	m := newManager(t, &mcpbind.ManagerOptions{}, mcpbind.ServerConfig{Name: "big", Command: "x"})
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := listingServer(&list).Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	tools, err := m.ServerTools(t.Context(), "big")
	if err != nil || len(tools) != 10_000 {
		t.Fatalf("ServerTools = %d tools, %v; want 10000", len(tools), err)
	}
}

// recordHandler sends every log record's message and attributes to a
// channel.
type recordHandler struct{ records chan<- string }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h recordHandler) WithGroup(string) slog.Handler            { return h }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	text := r.Message
	r.Attrs(func(a slog.Attr) bool {
		text += " " + a.Key + "=" + a.Value.String()
		return true
	})
	h.records <- text
	return nil
}

// TestToolListChangedIsBounded: a server that starts within the bounds and
// then, told its list changed, pages forever keeps the tools it had, and
// the warning names it and the bound.
func TestToolListChangedIsBounded(t *testing.T) {
	records := make(chan string, 16)
	changed := make(chan []string, 4)
	m := newManager(t, &mcpbind.ManagerOptions{
		Logger:         slog.New(recordHandler{records}),
		OnToolsChanged: func(_ string, tools []contract.ExecutableTool) { changed <- toolNames(tools) },
	}, mcpbind.ServerConfig{Name: "turncoat", Command: "x"})
	var list atomic.Pointer[lister]
	var server *mcp.Server
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, transport := mcp.NewInMemoryTransports()
		server = listingServer(&list)
		if _, err := server.Connect(context.Background(), transport, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	tools, err := m.ServerTools(t.Context(), "turncoat")
	if err != nil || !cmp.Equal(toolNames(tools), []string{"mcp__turncoat__echo"}) {
		t.Fatalf("ServerTools = %v, %v", toolNames(tools), err)
	}
	list.Store(&endless)
	server.AddTool(smallTool("more"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	select {
	case rec := <-records:
		for _, want := range []string{"re-reading an MCP server's tools failed", "server=turncoat", "it has more than 100 pages of tools"} {
			if !strings.Contains(rec, want) {
				t.Errorf("log record %q does not say %q", rec, want)
			}
		}
	case names := <-changed:
		t.Fatalf("the tools changed to %d tools", len(names))
	case <-time.After(30 * time.Second):
		t.Fatal("no warning after list_changed")
	}
	if names := toolNames(m.Tools()); !cmp.Equal(names, []string{"mcp__turncoat__echo"}) {
		t.Errorf("tools after the failed re-read: %v", names)
	}
}
