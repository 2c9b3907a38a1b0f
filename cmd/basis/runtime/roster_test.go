//go:build unix

package runtime_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

const (
	workspace = "/repo/.basis/tools.json"
	operator  = "/home/u/.config/basis/tools.json"
	server    = "github (/repo/.mcp.json)"
)

func toolOf(name, source string) *hostTool {
	h := newHostTool(name, contract.SideEffectNone)
	h.desc.Source = source
	return h
}

func mcpToolOf(name string) *hostTool {
	h := toolOf(name, server)
	h.desc.Binding = contract.BindingMCP
	return h
}

func rosterRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	b := runtime.NewBuilder()
	if err := b.Add(toolOf("build", workspace), toolOf("fmt", operator), toolOf("test", workspace)); err != nil {
		t.Fatal(err)
	}
	if err := b.AddMCP(mcpToolOf("mcp__github__search")); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestReplaceSource(t *testing.T) {
	tests := []struct {
		name    string
		source  string
		mcp     bool
		tools   []contract.ExecutableTool
		want    []string
		wantErr error
		says    string
	}{
		{"the workspace manifest changed", workspace, false,
			[]contract.ExecutableTool{toolOf("build", workspace), toolOf("vet", workspace)},
			[]string{"build", "vet", "fmt", "mcp__github__search"}, nil, ""},
		{"the workspace manifest is gone", workspace, false, nil,
			[]string{"fmt", "mcp__github__search"}, nil, ""},
		{"a new source", "/other/tools.json", false, []contract.ExecutableTool{toolOf("deploy", "/other/tools.json")},
			[]string{"build", "fmt", "test", "mcp__github__search", "deploy"}, nil, ""},
		{"an MCP server's tools changed", server, true, []contract.ExecutableTool{mcpToolOf("mcp__github__issues"), mcpToolOf("mcp__github__search")},
			[]string{"build", "fmt", "test", "mcp__github__issues", "mcp__github__search"}, nil, ""},
		{"an MCP server failed", server, true, nil,
			[]string{"build", "fmt", "test"}, nil, ""},

		{"collides with another source", workspace, false, []contract.ExecutableTool{toolOf("build", workspace), toolOf("fmt", workspace)},
			nil, runtime.ErrCollision, `tool "fmt" from ` + workspace + ` collides with tool "fmt" from ` + operator},
		{"collides within itself", workspace, false, []contract.ExecutableTool{toolOf("build", workspace), toolOf("build", workspace)},
			nil, runtime.ErrCollision, `tool "build" from ` + workspace + ` collides with tool "build" from ` + workspace},
		{"a reserved name", workspace, false, []contract.ExecutableTool{toolOf("Spawn", workspace)},
			nil, runtime.ErrReservedName, `tool "Spawn" from ` + workspace + `: reserved tool name`},
		{"the MCP prefix outside an MCP source", workspace, false, []contract.ExecutableTool{toolOf("mcp__github__search2", workspace)},
			nil, runtime.ErrReservedName, `tool "mcp__github__search2" from ` + workspace + `: reserved tool name`},
		{"an MCP source under its own names", server, true, []contract.ExecutableTool{mcpToolOf("search")},
			[]string{"build", "fmt", "test", "search"}, nil, ""},
		{"an MCP source under its own names collides", server, true, []contract.ExecutableTool{mcpToolOf("build")},
			nil, runtime.ErrCollision, `tool "build" from ` + server + ` collides with tool "build" from ` + workspace},
		{"an MCP source with the prefix in capitals", server, true, []contract.ExecutableTool{mcpToolOf("MCP__github__search")},
			nil, runtime.ErrInvalidName, `tool "MCP__github__search" from ` + server + `: invalid tool name`},
		{"a tool of another source", workspace, false, []contract.ExecutableTool{toolOf("lint", operator)},
			nil, runtime.ErrInvalidTool, `tool "lint" from ` + operator + `: invalid tool: it is not from ` + workspace},
		{"an MCP source replaced as a manifest", server, false, []contract.ExecutableTool{},
			nil, runtime.ErrInvalidTool, `invalid tool: ` + server + ` holds tools bridged from an MCP server; replace them with ReplaceMCPSource`},
		{"a manifest replaced as an MCP source", workspace, true, []contract.ExecutableTool{},
			nil, runtime.ErrInvalidTool, `invalid tool: ` + workspace + ` holds tools that are not bridged from an MCP server; replace them with ReplaceSource`},
		{"no source", "", false, nil,
			nil, runtime.ErrInvalidTool, `invalid tool: a replacement needs the source whose tools it replaces`},
		{"a schema that does not compile", workspace, false, []contract.ExecutableTool{func() contract.ExecutableTool {
			h := toolOf("vet", workspace)
			h.desc.InputSchema = json.RawMessage(`{"type":"array"}`)
			return h
		}()}, nil, runtime.ErrInvalidTool, `tool "vet" from ` + workspace + `: invalid tool: input schema`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := rosterRuntime(t)
			before := namesOf(rt)
			changed := rt.Changed()
			replace := rt.ReplaceSource
			if tt.mcp {
				replace = rt.ReplaceMCPSource
			}
			err := replace(tt.source, tt.tools)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || (err == nil || !strings.HasPrefix(err.Error(), tt.says)) {
					t.Fatalf("ReplaceSource = %v, want %v saying %q", err, tt.wantErr, tt.says)
				}
				if diff := cmp.Diff(before, namesOf(rt)); diff != "" {
					t.Errorf("a refused replacement changed the roster (-want +got):\n%s", diff)
				}
				if closed(changed) {
					t.Error("a refused replacement announced a change")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, namesOf(rt)); diff != "" {
				t.Errorf("roster (-want +got):\n%s", diff)
			}
			if !closed(changed) {
				t.Error("Changed was not closed")
			}
			if closed(rt.Changed()) {
				t.Error("the next Changed channel is closed already")
			}
			// The roster everything else reads is the new one too.
			if got := len(rt.AnthropicTools()); got != len(tt.want) {
				t.Errorf("AnthropicTools has %d tools, want %d", got, len(tt.want))
			}
			for _, name := range before {
				_, ok := rt.Tool(name)
				if want := slices.Contains(tt.want, name); ok != want {
					t.Errorf("Tool(%s) found %v, want %v", name, ok, want)
				}
			}
		})
	}
}

func TestReplacedToolsAreCalledAndRemovedOnesRefused(t *testing.T) {
	rt := rosterRuntime(t)
	vet := toolOf("vet", workspace)
	if err := rt.ReplaceSource(workspace, []contract.ExecutableTool{vet}); err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"text":"x"}`)
	if out := rt.Call(t.Context(), "vet", contract.Call{Input: in}); out.Status != runtime.StatusOK || out.Text != "vet ran" {
		t.Errorf("new tool: %v %q", out.Status, out.Text)
	}
	if out := rt.Call(t.Context(), "build", contract.Call{Input: in}); out.Stage != runtime.StageUnknown {
		t.Errorf("removed tool: %v %v %q", out.Status, out.Stage, out.Text)
	}
}

// A call in flight finishes on the tool it started with; a call after the
// replacement gets the new one.
func TestCallsInFlightKeepTheirTool(t *testing.T) {
	old := newGatedTool("build", workspace, "the old build")
	b := runtime.NewBuilder()
	if err := b.Add(old); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"text":"x"}`)
	done := make(chan runtime.Outcome)
	go func() { done <- rt.Call(t.Context(), "build", contract.Call{Input: in}) }()
	<-old.started

	fresh := toolOf("build", workspace)
	fresh.execute = nil // answers "build ran"
	if err := rt.ReplaceSource(workspace, []contract.ExecutableTool{fresh}); err != nil {
		t.Fatal(err)
	}
	if out := rt.Call(t.Context(), "build", contract.Call{Input: in}); out.Text != "build ran" {
		t.Errorf("a call after the replacement got %q", out.Text)
	}
	close(old.release)
	if out := <-done; out.Status != runtime.StatusOK || out.Text != "the old build" {
		t.Errorf("the call in flight: %v %q", out.Status, out.Text)
	}
}

// A batch runs on the roster it started with, even when a replacement
// removes a tool it has yet to call.
func TestBatchesKeepTheirRoster(t *testing.T) {
	first := newGatedTool("first", workspace, "first ran")
	second := toolOf("second", workspace)
	b := runtime.NewBuilder()
	if err := b.Add(first, second); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"text":"x"}`)
	done := make(chan []runtime.Outcome)
	go func() {
		done <- rt.CallBatch(t.Context(), []runtime.BatchCall{{Name: "first", Call: contract.Call{Input: in}}, {Name: "second", Call: contract.Call{Input: in}}})
	}()
	<-first.started
	if err := rt.ReplaceSource(workspace, nil); err != nil {
		t.Fatal(err)
	}
	close(first.release)
	outs := <-done
	if diff := cmp.Diff([]string{"first ran", "second ran"}, []string{outs[0].Text, outs[1].Text}); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
}

// Replacements beside calls, roster reads and waits on Changed: the race
// detector watches.
func TestReplaceSourceIsSafeForConcurrentUse(t *testing.T) {
	rt := rosterRuntime(t)
	in := json.RawMessage(`{"text":"x"}`)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch w {
				case 0:
					rt.Call(t.Context(), "build", contract.Call{Input: in})
				case 1:
					rt.CallBatch(t.Context(), []runtime.BatchCall{{Name: "fmt", Call: contract.Call{Input: in}}, {Name: "build", Call: contract.Call{Input: in}}})
				case 2:
					_ = rt.Tools()
					_ = rt.OpenAITools()
					_, _ = rt.Tool("build")
				case 3:
					select {
					case <-rt.Changed():
					case <-stop:
						return
					}
				}
			}
		})
	}
	for i := range 200 {
		tools := []contract.ExecutableTool{toolOf(fmt.Sprintf("build%d", i%3), workspace)}
		if i%2 == 0 {
			tools = append(tools, toolOf("build", workspace))
		}
		if err := rt.ReplaceSource(workspace, tools); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	want := []string{"build1", "fmt", "mcp__github__search"} // the last replacement, i = 199
	if diff := cmp.Diff(want, namesOf(rt)); diff != "" {
		t.Errorf("roster after the replacements (-want +got):\n%s", diff)
	}
}
