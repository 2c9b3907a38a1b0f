//go:build unix

package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// A rule written for one repository's tool must not approve another
// repository's tool of the same name; the gate learns the tool's source
// from the runtime, resolved through symlinks.
func TestRulesSeeTheToolsResolvedSource(t *testing.T) {
	repoA, repoB, linked := twoRepositories(t)
	rule := approver.Rule{Tool: "word_count", Source: repoA, Decision: approver.RuleAllow}
	tests := []struct {
		name   string
		source string
		want   runtime.Status
	}{
		{"the repository the rule was written for", repoA, runtime.StatusOK},
		{"the same file through a symlink", linked, runtime.StatusOK},
		{"another repository's tool of the same name", repoB, runtime.StatusRefused},
	}
	for _, tt := range tests {
		tool := newHostTool("word_count", contract.SideEffectProcess)
		tool.desc.Binding, tool.desc.Source = contract.BindingDeclared, tt.source
		gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: []approver.Rule{rule}})
		if err != nil {
			t.Fatal(err)
		}
		b := runtime.NewBuilder()
		if err := b.Add(tool); err != nil {
			t.Fatal(err)
		}
		rt, err := b.Build(&runtime.Options{Gate: gate})
		if err != nil {
			t.Fatal(err)
		}
		out := rt.Call(t.Context(), "word_count", contract.Call{ID: "1", Input: []byte(`{"text":"a b"}`)})
		if out.Status != tt.want {
			t.Errorf("%s: status %v (%s), want %v", tt.name, out.Status, out.Text, tt.want)
		}
	}
}

// Tools added together each get their own source's resolution: a
// manifest's tools share one path, resolved once, and tools from another
// path, or from the same file through a symlink, are not confused with
// them.
func TestToolsAddedTogetherKeepTheirOwnSources(t *testing.T) {
	repoA, repoB, linked := twoRepositories(t)
	sources := map[string]string{ // tool: its descriptor's source
		"a1": repoA, "b1": repoB, "a2": repoA, "l1": linked, "b2": repoB,
	}
	want := map[string]string{"a1": repoA, "a2": repoA, "l1": repoA, "b1": repoB, "b2": repoB}
	var tools []contract.ExecutableTool
	for _, name := range []string{"a1", "b1", "a2", "l1", "b2"} {
		tool := newHostTool(name, contract.SideEffectProcess)
		tool.desc.Binding, tool.desc.Source = contract.BindingDeclared, sources[name]
		tools = append(tools, tool)
	}
	b := runtime.NewBuilder()
	if err := b.Add(tools...); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if got, ok := rt.RuleSource(name); !ok || got != w {
			t.Errorf("%s (source %s): RuleSource = %q, %v; want %q", name, sources[name], got, ok, w)
		}
	}
}

// twoRepositories makes two repositories' manifests, repoA's also
// reached through a symlinked checkout (linked), and returns the three
// paths: the first two with no symbolic link in them.
func twoRepositories(t *testing.T) (repoA, repoB, linked string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repoA = filepath.Join(dir, "repoA", ".basis", "tools.json")
	repoB = filepath.Join(dir, "repoB", ".basis", "tools.json")
	for _, p := range []string{repoA, repoB} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "repoA"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	return repoA, repoB, filepath.Join(dir, "linked", ".basis", "tools.json")
}

// Explain walks a call up to the gate and says what the rules decide,
// running nothing and asking nobody.
func TestExplainRunsNothing(t *testing.T) {
	tool := newHostTool("write", contract.SideEffectProcess)
	tool.desc.Binding, tool.desc.Source = contract.BindingDeclared, "/repo/.basis/tools.json"
	asked := false
	ask := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		asked = true
		return approver.Answer{Decision: approver.Allow}, nil
	})
	gate, err := approver.NewGate(ask, &approver.GateOptions{Rules: []approver.Rule{
		{Tool: "write", Source: "/repo/.basis/tools.json", Decision: approver.RuleDeny, Reason: "not today"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b := runtime.NewBuilder()
	if err := b.Add(tool); err != nil {
		t.Fatal(err)
	}
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if src, ok := rt.RuleSource("write"); !ok || src != "/repo/.basis/tools.json" {
		t.Errorf("RuleSource = %q, %v", src, ok)
	}
	ex := rt.Explain(t.Context(), "write", contract.Call{ID: "1", Input: []byte(`{"text": "x", "text": "y"}`)})
	if ex.Refusal == nil || ex.Refusal.Stage != runtime.StageInvalid {
		t.Errorf("a duplicate key: %+v", ex.Refusal)
	}
	ex = rt.Explain(t.Context(), "wirte", contract.Call{ID: "1", Input: []byte(`{}`)})
	if ex.Refusal == nil || ex.Refusal.Stage != runtime.StageUnknown {
		t.Errorf("an unknown tool: %+v", ex.Refusal)
	}
	ex = rt.Explain(t.Context(), "write", contract.Call{ID: "1", Input: []byte(`{"text": "x"}`)})
	if ex.Refusal != nil || ex.Preview == nil || ex.Rules == nil || !ex.Rules.Decided || ex.Rules.Verdict.Allow {
		t.Fatalf("explain: %+v", ex)
	}
	if ex.Request.Source != "/repo/.basis/tools.json" || string(ex.Request.Input) != `{"text":"x"}` {
		t.Errorf("request %+v", ex.Request)
	}
	if asked || tool.executes.Load() != 0 {
		t.Errorf("explain asked the approver (%v) or ran the tool (%d times)", asked, tool.executes.Load())
	}
}

// An MCP tool's source names its config file and its server; rules are
// bound to the config file alone, resolved through symlinks as a
// manifest's path is.
func TestMCPToolRuleSourceIsItsConfigFile(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "repo", ".mcp.json")
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "linked")
	if err := os.Symlink(filepath.Join(dir, "repo"), linked); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(config)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, source, want string
	}{
		{"config and server", config + "#stock", resolved},
		{"through a symlink", filepath.Join(linked, ".mcp.json") + "#stock", resolved},
		{"a # in a directory name", filepath.Join(dir, "a#b", ".mcp.json") + "#stock", filepath.Join(dir, "a#b", ".mcp.json")},
		{"a host's server, no file", "#stock", ""},
	}
	for _, tt := range tests {
		tool := newHostTool("mcp__stock__level", contract.SideEffectExternal)
		tool.desc.Binding, tool.desc.Source = contract.BindingMCP, tt.source
		b := runtime.NewBuilder()
		if err := b.AddMCP(tool); err != nil {
			t.Fatal(err)
		}
		rt, err := b.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := rt.RuleSource("mcp__stock__level"); !ok || got != tt.want {
			t.Errorf("%s: RuleSource = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}
