//go:build unix

package approver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// outcome is what a gate did with a call: "allow" or "deny" by a rule, or
// "ask" when the approver was asked.
func outcome(v approver.Verdict) string {
	switch {
	case v.Source == approver.SourceApprover:
		return "ask"
	case v.Source == approver.SourceRule && v.Allow:
		return "allow"
	case v.Source == approver.SourceRule:
		return "deny"
	}
	return "other: " + string(v.Source)
}

// layered is a rule about "go test *" in one layer. Session rules are made
// the way a gate makes them, from an approver's for-session answer.
type layered struct {
	scope    approver.Scope
	decision approver.RuleDecision
	bare     bool // a bare tool rule instead of the command rule
}

func (l layered) String() string {
	kind := "command"
	if l.bare {
		kind = "bare"
	}
	return fmt.Sprintf("%s %s %s", l.scope, l.decision, kind)
}

// gateWith builds a gate holding rules and returns what it does with
// "go test -run X ./...". The approver asked answers allow.
func gateWith(t *testing.T, noOperatorAllows bool, rules ...layered) approver.Verdict {
	t.Helper()
	var fixed, session []approver.Rule
	// A bare fixed rule would answer the question that makes a session
	// rule; then the session rule is stated with the fixed ones.
	sessionViaOptions := false
	for _, l := range rules {
		sessionViaOptions = sessionViaOptions || l.bare && l.scope != approver.ScopeSession
	}
	for _, l := range rules {
		r := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Decision: l.decision, Scope: l.scope}
		if !l.bare {
			r.Command = approver.Words("go", "test", "*")
		}
		if l.scope == approver.ScopeWorkspace {
			r.Source = ""
		}
		if l.scope == approver.ScopeSession && !sessionViaOptions {
			session = append(session, r)
			continue
		}
		fixed = append(fixed, r)
	}
	var pending []approver.Rule
	a := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		if len(pending) > 0 {
			r := pending[0]
			pending = pending[1:]
			answer := approver.Answer{Decision: approver.AllowSession}
			if r.Decision == approver.RuleDeny {
				answer.Decision = approver.DenySession
			}
			if r.Command != nil {
				answer.Remember = &approver.Remember{Command: []string{"go", "test", "*"}}
			} else {
				answer.Remember = &approver.Remember{Tool: true}
			}
			return answer, nil
		}
		return approver.Answer{Decision: approver.Allow, Reason: "asked"}, nil
	})
	g, err := approver.NewGate(a, &approver.GateOptions{Rules: fixed, NoOperatorAllowRules: noOperatorAllows})
	if err != nil {
		t.Fatal(err)
	}
	// Session rules come from answers: ask about a call no fixed rule
	// matches, and let the approver answer for the session.
	for _, r := range session {
		pending = append(pending, r)
		g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: approver.BuiltinSource,
			Preview: preview(t, contract.SideEffectProcess, `{"body":"true","commands":null,"cwd":"/repo","mode":"command","target":"local"}`)})
	}
	if len(pending) > 0 || len(g.SessionRules()) != len(session) {
		t.Fatalf("session rules %v, want %d", g.SessionRules(), len(session))
	}
	return g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, goTestRun)})
}

var (
	scopes    = []approver.Scope{approver.ScopeSystem, approver.ScopeOperator, approver.ScopeSession, approver.ScopeWorkspace}
	decisions = []approver.RuleDecision{approver.RuleAllow, approver.RuleAsk, approver.RuleDeny}
)

// possible leaves out what no layer can hold: a workspace allow, and a
// session ask (sessions remember answers, which allow or deny).
func possible(l layered) bool {
	return !(l.scope == approver.ScopeWorkspace && l.decision == approver.RuleAllow) &&
		!(l.scope == approver.ScopeSession && l.decision == approver.RuleAsk)
}

// TestStrictnessAcrossLayers: two rules of the same specificity, from any
// two layers, with any two decisions: the stricter decision wins (deny >
// ask > allow), whichever layer it comes from.
func TestStrictnessAcrossLayers(t *testing.T) {
	strictest := func(a, b approver.RuleDecision) string {
		rank := map[approver.RuleDecision]int{approver.RuleDeny: 0, approver.RuleAsk: 1, approver.RuleAllow: 2}
		if rank[a] < rank[b] {
			return string(a)
		}
		return string(b)
	}
	for _, sa := range scopes {
		for _, da := range decisions {
			a := layered{scope: sa, decision: da}
			if !possible(a) {
				continue
			}
			t.Run(a.String()+" alone", func(t *testing.T) {
				if got := outcome(gateWith(t, false, a)); got != string(da) {
					t.Errorf("got %s, want %s", got, da)
				}
			})
			for _, sb := range scopes {
				for _, db := range decisions {
					b := layered{scope: sb, decision: db}
					if !possible(b) || sa == approver.ScopeSession && sb == approver.ScopeSession {
						continue
					}
					t.Run(a.String()+" + "+b.String(), func(t *testing.T) {
						if got, want := outcome(gateWith(t, false, a, b)), strictest(da, db); got != want {
							t.Errorf("got %s, want %s", got, want)
						}
					})
				}
			}
		}
	}
}

// TestSystemLayerCannotBeOverridden: a more specific rule beats a bare one
// within the operator's, workspace's and session's rules, but not the
// system's deny or ask.
func TestSystemLayerCannotBeOverridden(t *testing.T) {
	tests := []struct {
		rules []layered
		want  string
	}{
		{[]layered{{approver.ScopeSystem, approver.RuleDeny, true}, {approver.ScopeOperator, approver.RuleAllow, false}}, "deny"},
		{[]layered{{approver.ScopeSystem, approver.RuleDeny, true}, {approver.ScopeSession, approver.RuleAllow, false}}, "deny"},
		{[]layered{{approver.ScopeSystem, approver.RuleAsk, true}, {approver.ScopeOperator, approver.RuleAllow, false}}, "ask"},
		{[]layered{{approver.ScopeSystem, approver.RuleAsk, true}, {approver.ScopeSession, approver.RuleAllow, false}}, "ask"},
		// A system ask still yields to any deny: deny is stricter.
		{[]layered{{approver.ScopeSystem, approver.RuleAsk, true}, {approver.ScopeWorkspace, approver.RuleDeny, false}}, "deny"},
		// Within the other layers, the specific rule wins.
		{[]layered{{approver.ScopeOperator, approver.RuleDeny, true}, {approver.ScopeOperator, approver.RuleAllow, false}}, "allow"},
		{[]layered{{approver.ScopeOperator, approver.RuleAsk, true}, {approver.ScopeOperator, approver.RuleAllow, false}}, "allow"},
		{[]layered{{approver.ScopeWorkspace, approver.RuleDeny, true}, {approver.ScopeOperator, approver.RuleAllow, false}}, "allow"},
		// A system allow is like an operator allow: a specific deny beats it.
		{[]layered{{approver.ScopeSystem, approver.RuleAllow, true}, {approver.ScopeOperator, approver.RuleDeny, false}}, "deny"},
		// And within the system file, its own specific allow beats its bare deny.
		{[]layered{{approver.ScopeSystem, approver.RuleDeny, true}, {approver.ScopeSystem, approver.RuleAllow, false}}, "allow"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.rules), func(t *testing.T) {
			if got := outcome(gateWith(t, false, tt.rules...)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNoOperatorAllowRules(t *testing.T) {
	operatorAllow := layered{approver.ScopeOperator, approver.RuleAllow, false}
	if got := outcome(gateWith(t, false, operatorAllow)); got != "allow" {
		t.Fatalf("with operator allows on: %s", got)
	}
	if got := outcome(gateWith(t, true, operatorAllow)); got != "ask" {
		t.Errorf("with operator allows off, an operator allow rule still answered: %s", got)
	}
	if got := outcome(gateWith(t, true, operatorAllow, layered{approver.ScopeSystem, approver.RuleAllow, false})); got != "allow" {
		t.Errorf("a system allow with operator allows off: %s", got)
	}
	if got := outcome(gateWith(t, true, layered{approver.ScopeOperator, approver.RuleDeny, false})); got != "deny" {
		t.Errorf("an operator deny with operator allows off: %s", got)
	}

	// Explain shows the operator allow as inert, and "always" is not saved.
	rule := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	saved := 0
	g, err := approver.NewGate(&counter{answer: approver.Answer{Decision: approver.AllowSession, Persist: true}}, &approver.GateOptions{
		Rules: []approver.Rule{rule}, NoOperatorAllowRules: true,
		Save: func(approver.Rule) (string, error) { saved++; return "rules.json", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	req := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, goTestRun)}
	if e := g.Explain(req); len(e.Matches) != 0 || len(e.Inert) != 1 || e.Decided {
		t.Errorf("Explain = %+v", e)
	}
	v := g.Authorize(context.Background(), req)
	if !v.Allow || saved != 0 || !errors.Is(v.SaveErr, approver.ErrNoSave) || !strings.Contains(v.Reason, "the system rules file allows no operator allow rules") {
		t.Errorf("verdict %+v, saved %d", v, saved)
	}
}

// TestAskRule: "allow git *, but always ask for git push *".
func TestAskRule(t *testing.T) {
	allowGit := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("git", "*"), Decision: approver.RuleAllow}
	askPush := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: []approver.CommandWord{{"git"}, {"push", "fetch"}, {"*"}}, Decision: approver.RuleAsk}
	asker := &counter{answer: approver.Answer{Decision: approver.AllowSession}}
	g, err := approver.NewGate(asker, &approver.GateOptions{Rules: []approver.Rule{allowGit, askPush}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(body string) approver.Verdict {
		words := strings.Fields(body)
		subj := fmt.Sprintf(`{"body":%q,"commands":[[%s]],"cwd":"/repo","mode":"command","target":"local"}`, body, `"`+strings.Join(words, `","`)+`"`)
		return g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, subj)})
	}
	if v := call("git status"); !v.Allow || v.Source != approver.SourceRule || asker.asked.Load() != 0 {
		t.Errorf("git status: %+v", v)
	}
	for i := range 2 {
		v := call("git push origin main")
		want := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: askPush.Command, Decision: approver.RuleAsk}
		if diff := cmp.Diff(&want, v.Rule); !v.Allow || v.Source != approver.SourceApprover || diff != "" {
			t.Errorf("git push, time %d: %+v (rule -want +got):\n%s", i+1, v, diff)
		}
		if !strings.HasSuffix(v.Reason, "; an operator rule asks about every such call, so this answer holds for this call only") {
			t.Errorf("reason %q", v.Reason)
		}
	}
	if n := asker.asked.Load(); n != 2 {
		t.Errorf("asked %d times about git push, want every time (2)", n)
	}
	call("git fetch")
	if n := asker.asked.Load(); n != 3 {
		t.Errorf("git fetch (the other alternative) was not asked about")
	}
}

func TestLoadSystemRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), approver.SystemRulesFile)
	sys, err := approver.LoadRules(context.Background(), path, approver.ScopeSystem)
	if err != nil || sys.NoOperatorAllowRules || sys.Rules != nil {
		t.Fatalf("a missing system file = %+v, %v", sys, err)
	}
	if err := os.WriteFile(path, []byte(`{"schema": 2, "allow_operator_allow_rules": false, "rules": [
  {"tool": "spawn", "command": ["curl", "*"], "decision": "deny", "reason": "no downloads on this machine"},
  {"tool": "spawn", "command": ["git", "push", "*"], "decision": "ask"}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err = approver.LoadRules(context.Background(), path, approver.ScopeSystem)
	if err != nil {
		t.Fatal(err)
	}
	want := []approver.Rule{
		{Tool: "spawn", Command: approver.Words("curl", "*"), Reason: "no downloads on this machine", Scope: approver.ScopeSystem, File: path, Number: 1},
		{Tool: "spawn", Command: approver.Words("git", "push", "*"), Decision: approver.RuleAsk, Scope: approver.ScopeSystem, File: path, Number: 2},
	}
	if diff := cmp.Diff(explicit(want), sys.Rules); diff != "" || !sys.NoOperatorAllowRules {
		t.Errorf("system rules (-want +got):\n%s\nNoOperatorAllowRules %v", diff, sys.NoOperatorAllowRules)
	}

	// A system deny the operator's allow cannot beat, from files.
	opPath := filepath.Join(t.TempDir(), "rules.json")
	op := &approver.RulesFile{Path: opPath}
	if _, err := op.Add(approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("curl", "example.com"), Decision: approver.RuleAllow}); err != nil {
		t.Fatal(err)
	}
	loaded, err := approver.LoadRules(context.Background(), op.Path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	opRules := loaded.Rules
	g, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Rules: append(sys.Rules, opRules...), NoOperatorAllowRules: sys.NoOperatorAllowRules})
	if err != nil {
		t.Fatal(err)
	}
	v := g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess,
		`{"body":"curl example.com","commands":[["curl","example.com"]],"cwd":"/repo","mode":"command","target":"local"}`)})
	if v.Allow || v.Reason != "tool spawn denied: no downloads on this machine" || v.Rule == nil || v.Rule.Scope != approver.ScopeSystem {
		t.Errorf("verdict %+v", v)
	}

	// Group- or world-writable: refused whole.
	if err := os.Chmod(path, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := approver.LoadRules(context.Background(), path, approver.ScopeSystem); !strings.Contains(err.Error(), "refused: it speaks for every user") || !strings.Contains(err.Error(), "chmod go-w") {
		t.Errorf("a group-writable system file = %v", err)
	}
	// Not a regular file: refused, naming it.
	fifoDir := t.TempDir()
	zero := filepath.Join(fifoDir, "rules.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := approver.LoadRules(context.Background(), zero, approver.ScopeSystem); err == nil || !strings.Contains(err.Error(), zero) {
		t.Errorf("a link to /dev/zero = %v", err)
	}
}

func TestExamplesCheckedAtLoad(t *testing.T) {
	good := writeFile(t, "rules.json", `{"schema": 2, "rules": [
  {"tool": "spawn", "source": "builtin", "command": ["git", ["push", "fetch"], "*"], "decision": "ask",
   "match": ["git push origin main", "git fetch", "git push 'a b'"], "not_match": ["git status", "git pushy"]},
  {"tool": "jenkins_job", "source": "/repo/.basis/tools.json", "pattern": "*\"job\":\"deploy\"*", "decision": "deny",
   "match": ["{\"input\": {\"job\": \"deploy\"}}"], "not_match": ["{\"input\": {\"job\": \"test\"}}"]}
]}`)
	rules, err := approver.LoadRules(context.Background(), good, approver.ScopeOperator)
	if err != nil || len(rules.Rules) != 2 {
		t.Fatalf("LoadRules = %v, %v", rules, err)
	}

	bad := writeFile(t, "rules.json", `{"schema": 2, "rules": [
  {"tool": "spawn", "source": "builtin", "command": ["git", ["push", "fetch"], "*"], "decision": "ask",
   "match": ["git push origin main"], "not_match": ["git status", "git fetch --all"]}
]}`)
	_, err = approver.LoadRules(context.Background(), bad, approver.ScopeOperator)
	var ce *configfile.Error
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Subject != "rule 1 (tool spawn)" || ce.Err.Error() != `"not_match" example 2 matches the rule` {
		t.Fatalf("error = %v (%+v)", err, ce)
	}
	if want := bad + `:3:67: rule 1 (tool spawn): "not_match" example 2 matches the rule`; err.Error() != want {
		t.Errorf("error = %s\nwant    %s", err, want)
	}

	// rules add refuses a rule whose example fails, and writes nothing.
	f := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	r := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow,
		Match: []string{"go test ./..."}, NotMatch: []string{"go vet ./..."}}
	if err := r.CheckExamples(); err != nil {
		t.Errorf("CheckExamples of a rule whose examples agree: %v", err)
	}
	r.Match = append(r.Match, "go build ./...")
	err = r.CheckExamples()
	if !errors.As(err, &ce) || err.Error() != `rule (tool spawn): "match" example 2 does not match the rule` {
		t.Errorf("CheckExamples = %v", err)
	}
	if _, err := f.Add(r); !errors.As(err, &ce) {
		t.Errorf("Add of a rule whose example fails = %v", err)
	}
	if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused rule created the file: %v", err)
	}
}

func TestProposeCommand(t *testing.T) {
	tests := map[string]string{
		"go test ./pkg/...":           "go test *",
		"go test":                     "go test",
		"ls -la":                      "ls *",
		"ls":                          "ls",
		"cargo build --release":       "cargo build *",
		"npm run lint -- --fix":       "npm run *",
		"./scripts/check.sh --fast":   "./scripts/check.sh *",
		"kubectl get pods -n default": "kubectl get *",
	}
	for line, want := range tests {
		argv, err := approver.SplitCommandLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := approver.FormatCommand(approver.ProposeCommand(argv)); got != want {
			t.Errorf("approver.ProposeCommand(%s) = %s, want %s", line, got, want)
		}
	}
}

// TestGateProposesAndSavesRules: asked about a command line, the approver
// is offered the narrowest rules for what no rule allows, and "always"
// saves them with the command line as their first match example.
func TestGateProposesAndSavesRules(t *testing.T) {
	var seen approver.Request
	a := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		seen = req
		return approver.Answer{Decision: approver.AllowSession, Persist: true, Remember: &approver.Remember{Proposed: true}}, nil
	})
	file := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	allowTail := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("tail", "*"), Decision: approver.RuleAllow}
	g, err := approver.NewGate(a, &approver.GateOptions{Rules: []approver.Rule{allowTail}, Save: file.Save})
	if err != nil {
		t.Fatal(err)
	}
	subj := `{"body":"go test ./pkg/... | tail -1 && go test -run 'X Y' ./cmd/...","commands":[["go","test","./pkg/..."],["tail","-1"],["go","test","-run","X Y","./cmd/..."]],"cwd":"/repo","mode":"command","target":"local"}`
	req := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, subj)}
	v := g.Authorize(context.Background(), req)
	want := []approver.Rule{{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow,
		Match: []string{"go test ./pkg/...", "go test -run 'X Y' ./cmd/..."}}}
	if diff := cmp.Diff(want, seen.Proposed); diff != "" {
		t.Errorf("proposed (-want +got):\n%s", diff)
	}
	if !v.Allow || v.SavedTo != file.Path {
		t.Errorf("verdict %+v", v)
	}
	loaded, err := approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
	if err != nil || len(loaded.Rules) != 1 {
		t.Fatalf("saved %+v, %v", loaded, err)
	}
	saved := loaded.Rules
	if got := saved[0].AddCommand(); got != `basis rules add --tool spawn --source builtin --command 'go test *' --allow --match 'go test ./pkg/...' --match 'go test -run '\''X Y'\'' ./cmd/...'` {
		t.Errorf("saved rule: %s", got)
	}
	// Remembered for the session too: another go test runs unasked.
	other := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, goTestRun)}
	if v := g.Authorize(context.Background(), other); !v.Allow || v.Source != approver.SourceRule {
		t.Errorf("a later go test: %+v", v)
	}
	// The request as a hook sees it names the proposal.
	seen.Preview.Subject = nil
	data, err := seen.MarshalJSON()
	if err != nil || !strings.Contains(string(data), `"proposed":["go test *"]`) {
		t.Errorf("hook request %s, %v", data, err)
	}
	var back approver.Request
	if err := back.UnmarshalJSON(data); err != nil || len(back.Proposed) != 1 || approver.FormatCommand(back.Proposed[0].Command) != "go test *" {
		t.Errorf("read back: %+v, %v", back, err)
	}
}
