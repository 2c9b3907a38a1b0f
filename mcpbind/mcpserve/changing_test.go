package mcpserve_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// changingRoster says when its tools change, as a basis runtime does.
type changingRoster struct {
	mu      sync.Mutex
	tools   []string
	changed chan struct{}
}

func (r *changingRoster) Tools() []contract.Descriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ds []contract.Descriptor
	for _, n := range r.tools {
		ds = append(ds, contract.Descriptor{Name: n, Description: "A tool.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return ds
}

func (r *changingRoster) Call(context.Context, string, contract.Call) (string, bool) {
	return "ok", false
}

func (r *changingRoster) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// add adds a tool and says so.
func (r *changingRoster) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools = append(r.tools, name)
	close(r.changed)
	r.changed = make(chan struct{})
}

// touch says the tools changed without changing them, as a runtime does
// when an upstream server announced a list it re-added a tool to.
func (r *changingRoster) touch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
}

// swap replaces the channel without closing the old one, as a roster
// replaced whole does: only Refresh tells the server.
func (r *changingRoster) swap(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools = append(r.tools, name)
	r.changed = make(chan struct{})
}

// A roster that says when it changes is served up to date without the
// host calling Refresh, also after the host replaced it whole and
// refreshed once.
func TestServeFollowsAChangingRoster(t *testing.T) {
	r := &changingRoster{tools: []string{"a"}, changed: make(chan struct{})}
	srv := mcpserve.NewServer(r, nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()
	listChanged := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} },
	})
	cs, err := connectListening(ctx, client, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-served })
	listed := func(name string) bool {
		res, err := cs.ListTools(context.Background(), nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
	}
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"b", func() { r.add("b") }},
		{"c", func() { r.swap("c"); srv.Refresh() }},
		{"d", func() { r.add("d") }}, // on the channel the last Refresh took
		// The roster said so: the client hears it, as a gateway's client
		// hears what an upstream server announced.
		{"d", r.touch},
	} {
		step.change()
		select {
		case <-listChanged:
		case <-time.After(10 * time.Second):
			t.Fatalf("no tools/list_changed after %s was added (or the roster said it changed)", step.name)
		}
		if !listed(step.name) {
			t.Errorf("%s is not listed after it was added", step.name)
		}
	}
}
