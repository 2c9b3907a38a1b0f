//go:build unix

package mcpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostGateway is a Gateway as a host runs it: its own tools named in a
// file (tools.txt, a name a line), the tools of the MCP servers of the
// operator's mcp.json (each server this test binary as a testserver),
// every call allowed, served over memory to one client.
type hostGateway struct {
	gw        *mcpserve.Gateway
	cs        *mcp.ClientSession
	dir       string
	log       *lockedBuffer
	mu        sync.Mutex
	opened    []*mcpbind.Manager // every client the gateway opened, in order
	toolsSeen chan struct{}      // a tools/list_changed reached the client
	updated   chan string        // the URI of each resources/updated the client heard
	acks      chan string        // see ackingClient
}

// writeServers writes the operator's mcp.json with one server per label.
func writeServers(t *testing.T, dir string, labels ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{}
	for _, l := range labels {
		servers[l] = map[string]any{"command": self, "env": map[string]string{upstreamEnv: l}}
	}
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, mcpbind.OperatorFileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeTools(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "tools.txt"), []byte(strings.Join(names, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// build is the host's: its tools from tools.txt, then the MCP tools.
func (h *hostGateway) build(ctx context.Context, mcpTools func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error) {
	data, err := os.ReadFile(filepath.Join(h.dir, "tools.txt"))
	if err != nil {
		return nil, err
	}
	b := runtime.NewBuilder()
	for _, n := range strings.Fields(string(data)) {
		if err := b.Add(depthTool{n}); err != nil {
			return nil, errors.Join(err, errors.New("a second problem"))
		}
	}
	tools, err := mcpTools(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.AddMCP(tools...); err != nil {
		return nil, err
	}
	gate, err := approver.NewGate(allowAll, nil)
	if err != nil {
		return nil, err
	}
	return b.Build(&runtime.Options{Gate: gate})
}

func (h *hostGateway) open(ctx context.Context, o *mcpbind.ManagerOptions) *mcpbind.Manager {
	m := mcpbind.Open(ctx, &mcpbind.LoadOptions{ConfigDir: h.dir}, o)
	h.mu.Lock()
	h.opened = append(h.opened, m)
	h.mu.Unlock()
	return m
}

func (h *hostGateway) clients() []*mcpbind.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.opened)
}

func newHostGateway(t *testing.T, tools []string, servers ...string) *hostGateway {
	t.Helper()
	h := &hostGateway{dir: t.TempDir(), log: &lockedBuffer{}, toolsSeen: make(chan struct{}, 100), updated: make(chan string, 16)}
	writeTools(t, h.dir, tools...)
	writeServers(t, h.dir, servers...)
	ctx := context.Background()
	gw, err := mcpserve.NewGateway(ctx, h.build, &mcpserve.GatewayOptions{
		Open:        h.open,
		Watch:       []string{filepath.Join(h.dir, "tools.txt")},
		ClientFiles: []string{filepath.Join(h.dir, mcpbind.OperatorFileName)},
		// The tests reload by hand (ReloadIfChanged): the ticker never
		// fires during one.
		Interval: time.Hour,
		Logger:   slog.New(slog.NewTextHandler(h.log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	h.gw = gw
	ct, st := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- gw.Serve(sctx, st) }()
	var client *mcp.Client
	client, h.acks = ackingClient(&mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { h.toolsSeen <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { h.updated <- req.Params.URI },
	})
	h.cs, err = connectListening(ctx, client, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cs.Close(); cancel(); <-served; gw.Close() })
	return h
}

// listed returns the names of the tools the client is served, of the
// servers and tools the test looks at.
func (h *hostGateway) listed(t *testing.T) []string {
	t.Helper()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		if !strings.HasPrefix(tl.Name, "mcp__") || strings.HasSuffix(tl.Name, "__echo") || strings.HasSuffix(tl.Name, "__grown") {
			names = append(names, tl.Name)
		}
	}
	slices.Sort(names)
	return names
}

func (h *hostGateway) call(t *testing.T, name string) string {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("%s: %+v, %v", name, res, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func allClosed(m *mcpbind.Manager) bool {
	for _, s := range m.Status() {
		if s.State != mcpbind.StateClosed {
			return false
		}
	}
	return true
}

// The gateway serves the host's tools and its servers' tools and says how
// each server is doing; an edited file is served after a reload, keeping
// the MCP client unless the MCP config changed, when a new client takes
// over and the replaced one is closed; a broken edit keeps what was
// served.
func TestGatewayReloads(t *testing.T) {
	h := newHostGateway(t, []string{"first"}, "alpha")
	ctx := context.Background()
	if diff := cmp.Diff([]string{"first", "mcp__alpha__echo"}, h.listed(t)); diff != "" {
		t.Fatalf("served at the start (-want +got):\n%s", diff)
	}
	if got := h.call(t, "mcp__alpha__echo"); got != "echo {}" {
		t.Errorf("mcp__alpha__echo gave %q", got)
	}
	if !strings.Contains(h.log.String(), "MCP server alpha ("+filepath.Join(h.dir, mcpbind.OperatorFileName)+"): connected") {
		t.Errorf("the log does not say how alpha is doing:\n%s", h.log)
	}

	tests := []struct {
		name    string
		edit    func(t *testing.T)
		want    []string
		clients int    // how many clients were opened by then
		log     string // a line the reload logged
	}{
		{"nothing changed", func(*testing.T) {}, []string{"first", "mcp__alpha__echo"}, 1, ""},
		{"a tool added", func(t *testing.T) { writeTools(t, h.dir, "first", "second") }, []string{"first", "mcp__alpha__echo", "second"}, 1, "reloaded: "},
		{"a broken edit", func(t *testing.T) { writeTools(t, h.dir, "first", "no!good") }, []string{"first", "mcp__alpha__echo", "second"}, 1, "still serving the tools from before the edit"},
		{"a server added", func(t *testing.T) { writeTools(t, h.dir, "first"); writeServers(t, h.dir, "alpha", "beta") }, []string{"first", "mcp__alpha__echo", "mcp__beta__echo"}, 2, "MCP server beta"},
		// gamma's tools under their own names: its echo collides with
		// the host's, once the new client is open.
		{"a broken edit of both", func(t *testing.T) {
			writeTools(t, h.dir, "first", "echo")
			self, _ := os.Executable()
			data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"gamma": map[string]any{"command": self, "tool_prefix": "", "env": map[string]string{upstreamEnv: "gamma"}}}})
			if err := os.WriteFile(filepath.Join(h.dir, mcpbind.OperatorFileName), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"first", "mcp__alpha__echo", "mcp__beta__echo"}, 3, "still serving the tools from before the edit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.log.String())
			tt.edit(t)
			h.gw.ReloadIfChanged(ctx)
			if diff := cmp.Diff(tt.want, h.listed(t)); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
			clients := h.clients()
			if len(clients) != tt.clients {
				t.Fatalf("%d clients opened, want %d", len(clients), tt.clients)
			}
			// Every client but the one served is closed.
			served := clients[len(clients)-1]
			if tt.name == "a broken edit of both" {
				served = clients[1]
			}
			for i, c := range clients {
				if closed := allClosed(c); closed != (c != served) {
					t.Errorf("client %d closed: %v", i, closed)
				}
			}
			if logged := h.log.String()[before:]; !strings.Contains(logged, tt.log) {
				t.Errorf("the reload logged no %q:\n%s", tt.log, logged)
			}
		})
	}
	if got := h.call(t, "mcp__beta__echo"); got != "echo {}" {
		t.Errorf("mcp__beta__echo gave %q", got)
	}
}

// A server that says its tools changed has them replaced in the served
// runtime, and the client is told.
func TestGatewayFollowsAServersToolList(t *testing.T) {
	h := newHostGateway(t, []string{"first"}, "alpha")
	h.call(t, "mcp__alpha__grow") // adds the tool grown
	deadline := time.After(30 * time.Second)
	for !slices.Contains(h.listed(t), "mcp__alpha__grown") {
		select {
		case <-h.toolsSeen:
		case <-deadline:
			t.Fatalf("mcp__alpha__grown never served: %v", h.listed(t))
		}
	}
	if got := h.call(t, "mcp__alpha__grown"); got != "echo {}" {
		t.Errorf("mcp__alpha__grown gave %q", got)
	}
}

// A first build that fails returns its error and closes the client it
// opened; Close closes the client served.
func TestGatewayClosesItsClient(t *testing.T) {
	h := &hostGateway{dir: t.TempDir()}
	writeServers(t, h.dir, "alpha")
	broken := errors.New("the rules do not load")
	_, err := mcpserve.NewGateway(context.Background(), func(ctx context.Context, mcpTools func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error) {
		if _, err := mcpTools(ctx); err != nil {
			return nil, err
		}
		return nil, broken
	}, &mcpserve.GatewayOptions{Open: h.open})
	if !errors.Is(err, broken) {
		t.Fatalf("NewGateway: %v, want the build's error", err)
	}
	if c := h.clients(); len(c) != 1 || !allClosed(c[0]) {
		t.Errorf("the client of a failed build is not closed (%d opened)", len(c))
	}

	writeTools(t, h.dir, "first")
	gw, err := mcpserve.NewGateway(context.Background(), h.build, &mcpserve.GatewayOptions{Open: h.open})
	if err != nil {
		t.Fatal(err)
	}
	served := h.clients()[1]
	if allClosed(served) {
		t.Fatal("the client served is closed before Close")
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	if !allClosed(served) {
		t.Error("Close left the client served running")
	}
}

// A client's subscription outlasts a reload that replaces the MCP client:
// the new client's server is subscribed, and its update reaches the
// subscriber.
func TestGatewayKeepsSubscriptionsAcrossAReload(t *testing.T) {
	h := newHostGateway(t, []string{"first"}, "alpha")
	uri := "mem://alpha/only"
	subscribe(t, h.cs, h.acks, uri)
	writeServers(t, h.dir, "alpha", "beta")
	h.gw.ReloadIfChanged(context.Background())
	if n := len(h.clients()); n != 2 {
		t.Fatalf("%d clients opened, want a second", n)
	}
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__alpha__change", Arguments: map[string]string{"what": "updated", "uri": uri}})
	if err != nil || res.IsError {
		t.Fatalf("change: %+v, %v", res, err)
	}
	select {
	case got := <-h.updated:
		if got != uri {
			t.Errorf("the client heard of %s, want %s", got, uri)
		}
	case <-time.After(30 * time.Second): // a bound, not a wait
		t.Fatalf("no update reached the client after the reload; log:\n%s", h.log)
	}
}
