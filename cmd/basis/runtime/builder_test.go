//go:build unix

package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
	"github.com/google/go-cmp/cmp"
)

// fromManifest is a tool as the declared binding describes one: its source
// is the manifest's path.
func fromManifest(name, manifest string) *hostTool {
	h := newHostTool(name, contract.SideEffectProcess)
	h.desc.Binding, h.desc.Source = contract.BindingDeclared, manifest
	return h
}

func spawnTool() *hostTool {
	h := newHostTool(contract.SpawnName, contract.SideEffectProcess)
	h.desc.Binding, h.desc.Source = contract.BindingSpawn, ""
	return h
}

func TestRegistrationRefusals(t *testing.T) {
	const manifest, otherManifest = "/repo/.basis/tools.json", "/home/u/.config/basis/tools.json"
	named := func(name string) *hostTool { return newHostTool(name, contract.SideEffectNone) }
	tests := []struct {
		name  string
		first []contract.ExecutableTool
		then  []contract.ExecutableTool
		is    error
		says  string
	}{
		{"declared vs host", []contract.ExecutableTool{fromManifest("deploy", manifest)}, []contract.ExecutableTool{named("deploy")}, runtime.ErrCollision,
			`tool "deploy" from host collides with tool "deploy" from ` + manifest + `: rename one of them`},
		{"two manifests", []contract.ExecutableTool{fromManifest("deploy", manifest)}, []contract.ExecutableTool{fromManifest("deploy", otherManifest)}, runtime.ErrCollision,
			`tool "deploy" from ` + otherManifest + ` collides with tool "deploy" from ` + manifest + `: rename one of them`},
		{"two in one call", nil, []contract.ExecutableTool{fromManifest("deploy", manifest), named("deploy")}, runtime.ErrCollision,
			`tool "deploy" from host collides with tool "deploy" from ` + manifest + `: rename one of them`},
		{"host tool named spawn", []contract.ExecutableTool{spawnTool()}, []contract.ExecutableTool{named("spawn")}, runtime.ErrReservedName,
			`tool "spawn" from host: reserved tool name: spawn, in any letter case, is basis's own tool for commands and delegation; rename this one`},
		{"host tool named spawn, spawn absent", nil, []contract.ExecutableTool{named("spawn")}, runtime.ErrReservedName, `tool "spawn" from host: reserved tool name`},
		{"Spawn", nil, []contract.ExecutableTool{named("Spawn")}, runtime.ErrReservedName, `tool "Spawn" from host: reserved tool name`},
		{"SPAWN from a manifest", nil, []contract.ExecutableTool{fromManifest("SPAWN", manifest)}, runtime.ErrReservedName, `tool "SPAWN" from ` + manifest + `: reserved tool name`},
		{"the spawn binding in another case", nil, []contract.ExecutableTool{func() contract.ExecutableTool {
			s := spawnTool()
			s.desc.Name = "Spawn"
			return s
		}()}, runtime.ErrReservedName, `tool "Spawn" from spawn: reserved tool name`},
		{"mcp prefix outside AddMCP", nil, []contract.ExecutableTool{named("mcp__github__search")}, runtime.ErrReservedName,
			`tool "mcp__github__search" from host: reserved tool name: names starting with mcp__, in any letter case, are reserved for tools bridged from MCP servers; rename it`},
		{"MCP__ outside AddMCP", nil, []contract.ExecutableTool{named("MCP__github__search")}, runtime.ErrReservedName, `tool "MCP__github__search" from host: reserved tool name`},
		{"Mcp__ outside AddMCP", nil, []contract.ExecutableTool{named("Mcp__x")}, runtime.ErrReservedName, `tool "Mcp__x" from host: reserved tool name`},
		{"invalid name", nil, []contract.ExecutableTool{named("has space")}, runtime.ErrInvalidName,
			`tool "has space" from host: invalid tool name: character 4 is not one of A-Z a-z 0-9 _ -`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := runtime.NewBuilder()
			if err := b.Add(tt.first...); err != nil {
				t.Fatalf("first Add: %v", err)
			}
			err := b.Add(tt.then...)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Add = %v, want %v", err, tt.is)
			}
			var re *runtime.RegistrationError
			if !errors.As(err, &re) {
				t.Fatalf("Add error %T is not a *RegistrationError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}

func TestInvalidNameIsTheContractsError(t *testing.T) {
	err := runtime.NewBuilder().Add(newHostTool("", contract.SideEffectNone))
	if !errors.Is(err, contract.ErrInvalidName) || !errors.Is(err, runtime.ErrInvalidName) {
		t.Errorf("Add = %v, want contract.ErrInvalidName", err)
	}
	if strings.Count(err.Error(), "invalid tool name") != 1 {
		t.Errorf("error %q says invalid tool name more than once", err)
	}
}

func TestSpawnMayUseItsName(t *testing.T) {
	rt := build(t, nil, spawnTool())
	if _, ok := rt.Tool("spawn"); !ok {
		t.Fatal("spawn is not registered")
	}
}

// An MCP server may offer its tools under a prefix of its own, or under
// their own names (tool_prefix): AddMCP takes any valid name but spawn's
// and mcp__ in another letter case, and a collision names both sources.
func TestAddMCPNames(t *testing.T) {
	const manifest = "/repo/.basis/tools.json"
	tests := []struct {
		name  string
		first []contract.ExecutableTool
		is    error
		says  string
	}{
		{name: "search"},
		{name: "gh_search"},
		{name: "mcp__github__search"},
		{name: "MCP__github__search", is: runtime.ErrInvalidName},
		{name: "Mcp__github__search", is: runtime.ErrInvalidName},
		{name: "spawn", is: runtime.ErrReservedName},
		{name: "Spawn", is: runtime.ErrReservedName},
		{name: "spawn", first: []contract.ExecutableTool{spawnTool()}, is: runtime.ErrReservedName},
		{name: "deploy", first: []contract.ExecutableTool{fromManifest("deploy", manifest)}, is: runtime.ErrCollision,
			says: `tool "deploy" from /repo/.mcp.json#deploys collides with tool "deploy" from ` + manifest + `: rename one of them`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := runtime.NewBuilder()
			if err := b.Add(tt.first...); err != nil {
				t.Fatal(err)
			}
			tool := mcpToolOf(tt.name)
			tool.desc.Source = "/repo/.mcp.json#deploys"
			err := b.AddMCP(tool)
			if !errors.Is(err, tt.is) || (tt.is == nil) != (err == nil) {
				t.Fatalf("AddMCP(%s) = %v, want %v", tt.name, err, tt.is)
			}
			if tt.says != "" && err.Error() != tt.says {
				t.Errorf("error %q, want %q", err, tt.says)
			}
		})
	}
}

func TestAddIsAllOrNothing(t *testing.T) {
	b := runtime.NewBuilder()
	a, c := newHostTool("alpha", contract.SideEffectNone), newHostTool("gamma", contract.SideEffectNone)
	if err := b.Add(a, newHostTool("mcp__x__y", contract.SideEffectNone), c); err == nil {
		t.Fatal("Add with a refused tool succeeded")
	}
	// Neither alpha nor gamma was registered, so adding them again works
	// and the roster holds each once.
	if err := b.Add(a, c); err != nil {
		t.Fatalf("Add after a refused Add: %v", err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha", "gamma"}, namesOf(rt)); diff != "" {
		t.Errorf("roster (-want +got):\n%s", diff)
	}
}

func TestBuildRefusesUncompilableSchemas(t *testing.T) {
	good := newHostTool("good", contract.SideEffectNone)
	bad := newHostTool("bad", contract.SideEffectNone)
	bad.desc.InputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}}}`)
	notObject := newHostTool("array_input", contract.SideEffectNone)
	notObject.desc.InputSchema = json.RawMessage(`{"type":"array"}`)

	b := runtime.NewBuilder()
	if err := b.Add(good, bad, notObject); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(nil)
	if rt != nil || !errors.Is(err, runtime.ErrInvalidTool) {
		t.Fatalf("Build = %v, %v; want no runtime and ErrInvalidTool", rt, err)
	}
	for _, s := range []string{`tool "bad" from host`, `tool "array_input" from host`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Build error %q does not name %s", err, s)
		}
	}
	if strings.Contains(err.Error(), `"good"`) {
		t.Errorf("Build error names the good tool: %q", err)
	}
}

func TestToolsKeepTheirDescriptors(t *testing.T) {
	const manifest = "/repo/.basis/tools.json"
	rt := build(t, nil, fromManifest("deploy", manifest), spawnTool())
	got := rt.Tools()
	if len(got) != 2 || got[0].Source != manifest || got[0].Binding != contract.BindingDeclared || got[1].Binding != contract.BindingSpawn {
		t.Errorf("descriptors %+v", got)
	}
}

// A binding's typed slice goes to Add through runtime.Tools; a nil
// pointer in it is refused, not a panic.
func TestToolsConvertsTypedSlices(t *testing.T) {
	typed := []*hostTool{newHostTool("alpha", contract.SideEffectNone), newHostTool("beta", contract.SideEffectNone)}
	b := runtime.NewBuilder()
	if err := b.Add(runtime.Tools(typed)...); err != nil {
		t.Fatal(err)
	}
	err := b.Add(runtime.Tools([]*hostTool{newHostTool("gamma", contract.SideEffectNone), nil})...)
	if !errors.Is(err, runtime.ErrInvalidTool) || !strings.Contains(err.Error(), "its Descriptor method panicked") {
		t.Errorf("Add with a nil *hostTool = %v", err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha", "beta"}, namesOf(rt)); diff != "" {
		t.Errorf("roster (-want +got):\n%s", diff)
	}
}

func namesOf(rt *runtime.Runtime) []string {
	var names []string
	for _, d := range rt.Tools() {
		names = append(names, d.Name)
	}
	return names
}

// precompiled is a tool that compiled its schema already, as a declared
// tool does at load.
type precompiled struct {
	*hostTool
	schema *inputschema.Schema
}

func (p precompiled) InputSchema() *inputschema.Schema { return p.schema }

func TestACompiledSchemaIsUsedAsIs(t *testing.T) {
	strict, err := inputschema.Compile(json.RawMessage(`{"type":"object","properties":{"job":{"type":"string"}},"required":["job"]}`))
	if err != nil {
		t.Fatal(err)
	}
	withSchema := precompiled{newHostTool("with_schema", contract.SideEffectNone), strict}
	withSchema.desc.InputSchema = json.RawMessage(`{"type":"object"}`)
	// No compiled schema: the descriptor's is compiled at Build.
	withoutSchema := precompiled{newHostTool("without_schema", contract.SideEffectNone), nil}
	rt := build(t, nil, withSchema, withoutSchema)

	tests := []struct {
		tool, input string
		want        runtime.Status
	}{
		{"with_schema", `{"text":"x"}`, runtime.StatusRefused},
		{"with_schema", `{"job":"x"}`, runtime.StatusOK},
		{"without_schema", `{"job":"x"}`, runtime.StatusRefused},
		{"without_schema", `{"text":"x"}`, runtime.StatusOK},
	}
	for _, tt := range tests {
		out := rt.Call(t.Context(), tt.tool, contract.Call{Input: json.RawMessage(tt.input)})
		if out.Status != tt.want {
			t.Errorf("%s %s: %v %q, want %v", tt.tool, tt.input, out.Status, out.Text, tt.want)
		}
	}
}
