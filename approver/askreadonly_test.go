//go:build unix

package approver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// With AskReadOnly a call whose side effect is none is judged by the
// rules and asked about like any other.
func TestAskReadOnly(t *testing.T) {
	tests := []struct {
		name   string
		ask    bool
		rules  []approver.Rule
		want   approver.Source
		allow  bool
		nAsked int32
	}{
		{"passes unasked by default", false, nil, approver.SourceReadOnly, true, 0},
		{"asked when turned off", true, nil, approver.SourceApprover, false, 1},
		{"a deny rule answers", true, []approver.Rule{{Tool: "search", Source: repoManifest, Decision: approver.RuleDeny}}, approver.SourceRule, false, 0},
		{"an allow rule answers", true, []approver.Rule{{Tool: "search", Source: repoManifest, Decision: approver.RuleAllow}}, approver.SourceRule, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &counter{answer: approver.Answer{Decision: approver.Deny}}
			g, err := approver.NewGate(asker, &approver.GateOptions{Rules: bound(tt.rules...), AskReadOnly: tt.ask})
			if err != nil {
				t.Fatal(err)
			}
			if g.AsksReadOnly() != tt.ask {
				t.Errorf("AsksReadOnly = %v", g.AsksReadOnly())
			}
			v := g.Authorize(context.Background(), request("search", contract.Call{ID: "c"}, preview(t, contract.SideEffectNone, `{"query":"x"}`)))
			if v.Source != tt.want || v.Allow != tt.allow || asker.asked.Load() != tt.nAsked {
				t.Errorf("verdict %+v, asked %d; want source %s, allow %v, asked %d", v, asker.asked.Load(), tt.want, tt.allow, tt.nAsked)
			}
		})
	}
}

// "ask_read_only" is read from every layer's file, and kept when basis
// adds a rule to the operator's.
func TestAskReadOnlyInRulesFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		text string
		want bool
		bad  bool
	}{
		{`{"schema": 2, "ask_read_only": true, "rules": []}`, true, false},
		{`{"schema": 2, "ask_read_only": false, "rules": []}`, false, false},
		{`{"schema": 2, "rules": []}`, false, false},
		{`{"schema": 2, "ask_read_only": "yes", "rules": []}`, false, true},
	} {
		for _, scope := range []approver.Scope{approver.ScopeSystem, approver.ScopeOperator, approver.ScopeWorkspace} {
			path := filepath.Join(dir, "rules.json")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := approver.LoadRules(context.Background(), path, scope)
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), `"ask_read_only" must be true or false`) {
					t.Errorf("%s %s: err %v", scope, tt.text, err)
				}
				continue
			}
			if err != nil || r.AskReadOnly != tt.want {
				t.Errorf("%s %s: AskReadOnly %v, %v; want %v", scope, tt.text, r != nil && r.AskReadOnly, err, tt.want)
			}
		}
	}
	path := filepath.Join(dir, "operator.json")
	if err := os.WriteFile(path, []byte(`{"schema": 2, "ask_read_only": true, "rules": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file := &approver.RulesFile{Path: path}
	if _, err := file.Add(approver.Rule{Tool: "search", Source: repoManifest, Decision: approver.RuleAllow}); err != nil {
		t.Fatal(err)
	}
	r, err := approver.LoadRules(context.Background(), path, approver.ScopeOperator)
	if err != nil || !r.AskReadOnly || len(r.Rules) != 1 {
		t.Fatalf("after Add: %+v, %v; want ask_read_only kept and one rule", r, err)
	}
}
