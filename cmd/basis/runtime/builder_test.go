package runtime_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/spawn"
)

const oneToolManifest = `{"schema": 1, "tools": {"deploy": {
	"description": "Deploy.", "input_schema": {"type": "object"}, "command": ["./deploy"]}}}`

func TestRegistrationRefusals(t *testing.T) {
	root := t.TempDir()
	manifest := writeManifest(t, root, oneToolManifest)
	fromManifest := loadDeclared(t, root)[0]

	otherRoot := t.TempDir()
	otherManifest := writeManifest(t, otherRoot, oneToolManifest)
	fromOtherManifest := loadDeclared(t, otherRoot)[0]

	spawnTool, err := spawn.New(spawn.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	hostSpawn := newHostTool("spawn", contract.SideEffectProcess)
	hostDeploy := newHostTool("deploy", contract.SideEffectProcess)
	mcpLookalike := newHostTool("mcp__github__search", contract.SideEffectNone)
	badName := newHostTool("has space", contract.SideEffectNone)

	tests := []struct {
		name  string
		first []contract.ExecutableTool
		then  []contract.ExecutableTool
		is    error
		says  []string
	}{
		{"declared vs host", []contract.ExecutableTool{fromManifest}, []contract.ExecutableTool{hostDeploy}, runtime.ErrCollision,
			[]string{`tool "deploy" from host collides with tool "deploy" from ` + manifest}},
		{"two manifests", []contract.ExecutableTool{fromManifest}, []contract.ExecutableTool{fromOtherManifest}, runtime.ErrCollision,
			[]string{otherManifest, manifest}},
		{"two in one call", nil, []contract.ExecutableTool{fromManifest, hostDeploy}, runtime.ErrCollision,
			[]string{"host", manifest}},
		{"host tool named spawn", []contract.ExecutableTool{spawnTool}, []contract.ExecutableTool{hostSpawn}, runtime.ErrReservedName,
			[]string{`tool "spawn" from host`, "basis's own tool"}},
		{"host tool named spawn, spawn absent", nil, []contract.ExecutableTool{hostSpawn}, runtime.ErrReservedName, nil},
		{"mcp prefix outside AddMCP", nil, []contract.ExecutableTool{mcpLookalike}, runtime.ErrReservedName,
			[]string{"reserved for tools bridged from MCP servers"}},
		{"invalid name", nil, []contract.ExecutableTool{badName}, runtime.ErrInvalidName, []string{"character 4"}},
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
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestSpawnMayUseItsName(t *testing.T) {
	spawnTool, err := spawn.New(spawn.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rt := build(t, nil, spawnTool)
	if _, ok := rt.Tool("spawn"); !ok {
		t.Fatal("spawn is not registered")
	}
}

func TestAddMCPRequiresThePrefix(t *testing.T) {
	b := runtime.NewBuilder()
	if err := b.AddMCP(newHostTool("search", contract.SideEffectNone)); !errors.Is(err, runtime.ErrInvalidName) {
		t.Errorf("AddMCP of an unprefixed name = %v", err)
	}
	if err := b.AddMCP(newHostTool("mcp__github__search", contract.SideEffectNone)); err != nil {
		t.Errorf("AddMCP of a prefixed name = %v", err)
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
	var names []string
	for _, d := range rt.Tools() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "alpha,gamma" {
		t.Errorf("roster = %v, want alpha,gamma", names)
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

func TestDeclaredSourcesAreFilePaths(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, oneToolManifest)
	rt := build(t, nil, loadDeclared(t, root)...)
	d := rt.Tools()[0]
	if d.Source != filepath.Join(root, declared.WorkspaceFile) || d.Binding != contract.BindingDeclared {
		t.Errorf("descriptor source %q binding %q", d.Source, d.Binding)
	}
}
