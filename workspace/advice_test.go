//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

// TestAllowCommand: the advice names every rule "always" would save, and
// never spawn as a whole.
func TestAllowCommand(t *testing.T) {
	goTest := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	goVet := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "vet", "*"), Decision: approver.RuleAllow}
	for _, tc := range []struct {
		name string
		req  approver.Request
		want string
	}{
		{"the proposal, every rule of it", approver.Request{Tool: "spawn", Proposed: []approver.Rule{goTest, goVet}}, goTest.AddCommand() + " && " + goVet.AddCommand()},
		{"spawn unanalysed: the form of a command rule", approver.Request{Tool: "spawn"}, "basis rules add --tool spawn --source builtin --command 'WORDS *' --allow"},
		{"a declared tool, bound to its source", approver.Request{Tool: "deploy", Source: "/repo/.basis/tools.json"},
			approver.Rule{Tool: "deploy", Source: "/repo/.basis/tools.json", Decision: approver.RuleAllow}.AddCommand()},
		{"an MCP tool, bound to its server's file", approver.Request{Tool: "mcp__github__search", Source: "/repo/.mcp.json#github"},
			approver.Rule{Tool: "mcp__github__search", Source: "/repo/.mcp.json#github", Decision: approver.RuleAllow}.AddCommand()},
		{"a server's resource read or prompt get: none", approver.Request{Tool: "mcp__github", Source: "/repo/.mcp.json#github"}, ""},
	} {
		if got := AllowCommand(tc.req); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestProblems: a joined error of one-line problems is split into them,
// nested joins too; an error of one line, or a wrapped one, stays whole.
func TestProblems(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"none", nil, nil},
		{"one", a, []string{"a"}},
		{"joined", errors.Join(a, b), []string{"a", "b"}},
		{"nested", errors.Join(a, errors.Join(b, c)), []string{"a", "b", "c"}},
		{"a join of one line", errors.Join(a), []string{"a"}},
		{"wrapped: one problem of several lines", fmt.Errorf("reading: %w", errors.Join(a, b)), []string{"reading: a\nb"}},
	} {
		var got []string
		for _, p := range Problems(tc.err) {
			got = append(got, p.Error())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
