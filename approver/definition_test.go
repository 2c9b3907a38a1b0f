//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// fmtSubject is a declared tool's subject; definitions are what the test
// varies.
const fmtSubject = `{"command":["./fmt.sh"],"cwd":".","env":[],"input":{},"program":"/repo/fmt.sh","tool":"fmt"}`

// fmtDef returns fmt's definition, as the declared binding writes it,
// with changes applied: members set to a JSON value, or removed when the
// value is "".
func fmtDef(t testing.TB, changes map[string]string) json.RawMessage {
	t.Helper()
	def := map[string]json.RawMessage{
		"command":     json.RawMessage(`["./fmt.sh"]`),
		"cwd":         json.RawMessage(`"."`),
		"env":         json.RawMessage(`{"NODE_OPTIONS":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}`),
		"files":       json.RawMessage(`{"/repo/fmt.sh":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`),
		"network":     json.RawMessage(`false`),
		"program":     json.RawMessage(`"/repo/fmt.sh"`),
		"sandbox":     json.RawMessage(`{"mode":"workspace-write","network":"none","network_cut":"namespace","write":["/data"]}`),
		"side_effect": json.RawMessage(`"process"`),
	}
	for k, v := range changes {
		if v == "" {
			delete(def, k)
			continue
		}
		def[k] = json.RawMessage(v)
	}
	raw, err := contract.CanonicalJSON(def)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func fmtRequest(t testing.TB, def json.RawMessage) approver.Request {
	return approver.Request{Tool: "fmt", Source: repoManifest, Definition: def, Preview: preview(t, contract.SideEffectProcess, fmtSubject)}
}

// TestAllowRulesCoverTheApprovedDefinition: the attack, and every
// way a definition can change. An allow rule for fmt, made when fmt ran
// ./fmt.sh, stops matching once the manifest makes fmt something else —
// a Python program with the network, a rewritten file, another argument
// — and the call is asked about again with what changed. A sandbox that
// got tighter still matches; one that got looser does not.
func TestAllowRulesCoverTheApprovedDefinition(t *testing.T) {
	approved := fmtDef(t, nil)
	tests := []struct {
		name    string
		current json.RawMessage
		allow   bool
		// changed is what the denial says changed; "" when allowed.
		changed string
	}{
		{"the same definition", approved, true, ""},
		{"the same, its keys in another order and spaced", json.RawMessage(strings.Replace(string(approved), `{"command"`, `{ "side_effect":"process", "command"`, 1)), true, ""},
		{"the issue: a Python program with the network",
			fmtDef(t, map[string]string{"command": `["python3","fmt.py"]`, "program": `"/usr/bin/python3"`, "side_effect": `"external"`, "network": `true`,
				"files":   `{"/repo/fmt.py":"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`,
				"sandbox": `{"mode":"workspace-write","network":"allowed","write":["/data"]}`}),
			false,
			`command was ["./fmt.sh"], is now ["python3","fmt.py"]; files /repo/fmt.py added: "sha256:bbbbbbbbbbbb…"; files /repo/fmt.sh removed (was "sha256:aaaaaaaaaaaa…"); network was false, is now true; program was "/repo/fmt.sh", is now "/usr/bin/python3"; sandbox network was "none", is now "allowed"; sandbox network_cut removed (was "namespace"); side_effect was "process", is now "external"`},
		{"the program file rewritten",
			fmtDef(t, map[string]string{"files": `{"/repo/fmt.sh":"sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}`}),
			false, `files /repo/fmt.sh was "sha256:aaaaaaaaaaaa…", is now "sha256:cccccccccccc…"`},
		{"another argument", fmtDef(t, map[string]string{"command": `["./fmt.sh","--fix"]`}), false, `command was ["./fmt.sh"], is now ["./fmt.sh","--fix"]`},
		{"another working directory", fmtDef(t, map[string]string{"cwd": `"/"`}), false, `cwd was ".", is now "/"`},
		{"an env value changed", fmtDef(t, map[string]string{"env": `{"NODE_OPTIONS":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}`}), false,
			`env NODE_OPTIONS was "sha256:111111111111…", is now "sha256:222222222222…"`},
		{"a new env name", fmtDef(t, map[string]string{"env": `{"BASH_ENV":"sha256:3333333333333333333333333333333333333333333333333333333333333333","NODE_OPTIONS":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}`}), false,
			`env BASH_ENV added: "sha256:333333333333…"`},
		{"side effect external", fmtDef(t, map[string]string{"side_effect": `"external"`}), false, `side_effect was "process", is now "external"`},
		{"a member the approval did not have", fmtDef(t, map[string]string{"interpreter": `"/usr/bin/perl"`}), false, `interpreter added: "/usr/bin/perl"`},
		// Tighter sandboxes: still covered.
		{"read-only", fmtDef(t, map[string]string{"sandbox": `{"mode":"read-only","network":"none","network_cut":"namespace","write":[]}`}), true, ""},
		{"fewer writable directories", fmtDef(t, map[string]string{"sandbox": `{"mode":"workspace-write","network":"none","network_cut":"namespace","write":[]}`}), true, ""},
		{"a writable directory inside an approved one", fmtDef(t, map[string]string{"sandbox": `{"mode":"workspace-write","network":"none","network_cut":"namespace","write":["/data/sub"]}`}), true, ""},
		// Looser sandboxes: asked again.
		{"the sandbox off", fmtDef(t, map[string]string{"sandbox": `{"mode":"off","network":"allowed","write":["/"]}`}), false,
			`sandbox mode was "workspace-write", is now "off"; sandbox network was "none", is now "allowed"; sandbox network_cut removed (was "namespace"); sandbox write was ["/data"], is now ["/"]`},
		{"another writable directory", fmtDef(t, map[string]string{"sandbox": `{"mode":"workspace-write","network":"none","network_cut":"namespace","write":["/data","/home/me"]}`}), false,
			`sandbox write was ["/data"], is now ["/data","/home/me"]`},
		{"the network cut less well", fmtDef(t, map[string]string{"sandbox": `{"mode":"workspace-write","network":"none","network_cut":"landlock-tcp","write":["/data"]}`}), false,
			`sandbox network_cut was "namespace", is now "landlock-tcp"`},
		{"no sandbox at all", fmtDef(t, map[string]string{"sandbox": ""}), false,
			`sandbox removed (was {"mode":"workspace-write","network":"none","network_cut":"namespace","write":["/data"]})`},
		{"no definition", nil, false, "the tool has no definition now"},
	}
	rule := approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow, Definition: approved, File: "/home/me/.config/basis/rules.json", Number: 1}
	asker := &counter{answer: approver.Answer{Decision: approver.Deny, Reason: "no"}}
	g, err := approver.NewGate(asker, &approver.GateOptions{Rules: []approver.Rule{rule}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker.asked.Store(0)
			v := g.Authorize(context.Background(), fmtRequest(t, tt.current))
			if v.Allow != tt.allow {
				t.Fatalf("verdict %+v, want allow=%v", v, tt.allow)
			}
			if tt.allow {
				if v.Source != approver.SourceRule || asker.asked.Load() != 0 {
					t.Errorf("allowed by %v, asked %d times; want the rule, nobody asked", v.Source, asker.asked.Load())
				}
				return
			}
			want := "tool fmt denied: no; operator rule 1 in /home/me/.config/basis/rules.json (allow fmt from /repo/.basis/tools.json) allowed fmt as it was; it has changed since: " + tt.changed
			if asker.asked.Load() != 1 || v.Reason != want {
				t.Errorf("asked %d times, reason\n%s\nwant\n%s", asker.asked.Load(), v.Reason, want)
			}
			ok, changes, err := approver.CompareDefinitions(approved, tt.current)
			if ok || err != nil || strings.Join(changes, "; ") != tt.changed {
				t.Errorf("CompareDefinitions = %v, %q, %v", ok, changes, err)
			}
		})
	}
}

// TestEveryKindOfAllowRuleIsBound: patterns, command rules, exact-subject
// session rules and bare rules all cover one definition; deny and ask
// rules hold whatever the tool has become; an allow rule that records no
// definition matches only a tool that has none.
func TestEveryKindOfAllowRuleIsBound(t *testing.T) {
	spawnDef := json.RawMessage(`{"sandbox":{"mode":"workspace-write","network":"none","write":[]}}`)
	looser := json.RawMessage(`{"sandbox":{"mode":"off","network":"allowed","write":["/"]}}`)
	tests := []struct {
		name        string
		rule        approver.Rule
		tool, subj  string
		def         json.RawMessage
		wantAllowed bool
		wantSource  approver.Source
	}{
		{"command rule, same definition", approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("cargo", "*"), Decision: approver.RuleAllow, Definition: spawnDef},
			"spawn", cargoTest, spawnDef, true, approver.SourceRule},
		{"command rule, looser sandbox", approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("cargo", "*"), Decision: approver.RuleAllow, Definition: spawnDef},
			"spawn", cargoTest, looser, false, approver.SourceApprover},
		{"pattern rule, changed", approver.Rule{Tool: "fmt", Source: repoManifest, Pattern: "*", Decision: approver.RuleAllow, Definition: fmtDef(t, nil)},
			"fmt", fmtSubject, fmtDef(t, map[string]string{"network": "true"}), false, approver.SourceApprover},
		{"bare rule with no definition, tool with one", approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow},
			"fmt", fmtSubject, fmtDef(t, nil), false, approver.SourceApprover},
		{"bare rule with no definition, tool with none", approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow},
			"fmt", fmtSubject, nil, true, approver.SourceRule},
		{"bare rule with a definition, tool with none", approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow, Definition: fmtDef(t, nil)},
			"fmt", fmtSubject, nil, false, approver.SourceApprover},
		{"deny rule, any definition", approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleDeny},
			"fmt", fmtSubject, fmtDef(t, map[string]string{"network": "true"}), false, approver.SourceRule},
		{"a definition that is not an object matches nothing", approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow},
			"fmt", fmtSubject, json.RawMessage(`["not", "an", "object"]`), false, approver.SourceApprover},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Rules: []approver.Rule{tt.rule}})
			if err != nil {
				t.Fatal(err)
			}
			// AllowAll answers whatever the rules leave: the source says
			// who decided.
			v := g.Authorize(context.Background(), approver.Request{Tool: tt.tool, Source: sourceOf(tt.tool), Definition: tt.def, Preview: preview(t, contract.SideEffectProcess, tt.subj)})
			if v.Source != tt.wantSource || (v.Source == approver.SourceRule && v.Allow != tt.wantAllowed) {
				t.Errorf("verdict %+v; want source %v, allowed by the rule %v", v, tt.wantSource, tt.wantAllowed)
			}
		})
	}
	// A session rule made from "this exact call" is bound too.
	g := newGate(t, &counter{answer: approver.Answer{Decision: approver.AllowSession}})
	first := g.Authorize(context.Background(), fmtRequest(t, fmtDef(t, nil)))
	same := g.Authorize(context.Background(), fmtRequest(t, fmtDef(t, nil)))
	changed := g.Authorize(context.Background(), fmtRequest(t, fmtDef(t, map[string]string{"program": `"/tmp/evil"`})))
	if first.Source != approver.SourceApprover || same.Source != approver.SourceRule || changed.Source != approver.SourceApprover {
		t.Errorf("session rule: first %v, same %v, changed %v; want approver, rule, approver", first.Source, same.Source, changed.Source)
	}
}

// TestAlwaysAnswersRecordTheDefinition: the terminal's t key (always this
// tool) and an MCP client's "allow always" save a rule that records the
// definition the person saw, in canonical form; a fresh gate with the
// saved rule allows that definition and asks about another, saying what
// changed. The question shows it too.
func TestAlwaysAnswersRecordTheDefinition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	file := &approver.RulesFile{Path: path}
	var asked []approver.Request
	always := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		asked = append(asked, req)
		return approver.Answer{Decision: approver.AllowSession, Persist: true, Remember: &approver.Remember{Tool: true}}, nil
	})
	g, err := approver.NewGate(always, &approver.GateOptions{Save: file.Save})
	if err != nil {
		t.Fatal(err)
	}
	// Spaced and out of order, as a binding might write it: saved
	// canonical.
	sloppy := json.RawMessage(" {\"side_effect\": \"process\", \"program\": \"/repo/fmt.sh\"} ")
	if v := g.Authorize(context.Background(), fmtRequest(t, sloppy)); !v.Allow || v.SavedTo != path {
		t.Fatalf("verdict %+v", v)
	}
	loaded, err := approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
	if err != nil || len(loaded.Warnings) != 0 || len(loaded.Rules) != 1 {
		t.Fatalf("LoadRules = %+v, %v", loaded, err)
	}
	rules := loaded.Rules
	if got, want := string(rules[0].Definition), `{"program":"/repo/fmt.sh","side_effect":"process"}`; got != want {
		t.Errorf("saved definition %s, want %s", got, want)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"definition":{"program":"/repo/fmt.sh","side_effect":"process"}`) {
		t.Errorf("the file does not hold the definition:\n%s", data)
	}

	asked = nil
	fresh, err := approver.NewGate(always, &approver.GateOptions{Rules: rules, Save: file.Save})
	if err != nil {
		t.Fatal(err)
	}
	if v := fresh.Authorize(context.Background(), fmtRequest(t, json.RawMessage(`{"program":"/repo/fmt.sh","side_effect":"process"}`))); v.Source != approver.SourceRule {
		t.Errorf("the approved definition: %+v, want allowed by the saved rule", v)
	}
	changed := json.RawMessage(`{"program":"/usr/bin/python3","side_effect":"external"}`)
	fresh.Authorize(context.Background(), fmtRequest(t, changed))
	if len(asked) != 1 || len(asked[0].Stale) != 1 {
		t.Fatalf("asked %d times, stale %+v; want asked once, with the stale rule", len(asked), asked)
	}
	wantChanges := []string{`program was "/repo/fmt.sh", is now "/usr/bin/python3"`, `side_effect was "process", is now "external"`}
	if diff := cmp.Diff(wantChanges, asked[0].Stale[0].Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	js, err := json.Marshal(asked[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"definition":{"program":"/usr/bin/python3","side_effect":"external"}`, `"changed":["operator rule 1 in ` + path + ` (allow fmt from /repo/.basis/tools.json) allowed fmt as it was; it has changed since: program was`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("a hook's request %s\nlacks %s", js, want)
		}
	}
	// The second "always" is a second approval beside the first.
	loaded, err = approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	rules = loaded.Rules
	if len(rules) != 2 || rules[1].Digest() == rules[0].Digest() || !strings.HasPrefix(rules[1].Digest(), "sha256:") {
		t.Errorf("rules after a second always: %+v", rules)
	}
}

// TestRulesFileRebindsOldApprovals: adding an allow rule for the same
// calls as one that records no definition replaces it where it stands (so
// the fix basis check prints is one command); the same rule again is not
// added twice.
func TestRulesFileRebindsOldApprovals(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 2, "rules": [
  {"tool": "fmt", "source": "/repo/.basis/tools.json", "decision": "allow"},
  {"tool": "deploy", "source": "/repo/.basis/tools.json", "decision": "deny"}
]}`)
	file := &approver.RulesFile{Path: path}
	def := fmtDef(t, nil)
	rebound := approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow, Definition: def}
	for i, wantAdded := range []bool{true, false} {
		added, err := file.Add(rebound)
		if err != nil || added != wantAdded {
			t.Fatalf("Add %d = %v, %v; want %v", i+1, added, err, wantAdded)
		}
	}
	loaded, err := approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
	if err != nil || len(loaded.Warnings) != 0 {
		t.Fatalf("LoadRules = %+v, %v", loaded, err)
	}
	rules := loaded.Rules
	got := []string{}
	for _, r := range rules {
		got = append(got, r.String()+" "+r.Digest())
	}
	want := []string{"allow fmt from /repo/.basis/tools.json " + approver.DefinitionDigest(def), "deny deploy from /repo/.basis/tools.json "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	// A deny rule takes no definition.
	if _, err := file.Add(approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleDeny, Definition: def}); err == nil {
		t.Error("a deny rule with a definition was added")
	}
}

// TestExplainShowsStaleRules: basis explain lists the allow rule that no
// longer covers the tool, with what changed, and proposes the rule that
// would allow it as it is now.
func TestExplainShowsStaleRules(t *testing.T) {
	rule := approver.Rule{Tool: "fmt", Source: repoManifest, Decision: approver.RuleAllow, Definition: fmtDef(t, nil)}
	g := newGate(t, approver.DenyAll(), rule)
	e := g.Explain(fmtRequest(t, fmtDef(t, map[string]string{"network": "true"})))
	want := []approver.StaleRule{{Rule: rule, Changes: []string{"network was false, is now true"}}}
	if diff := cmp.Diff(want, e.Stale); diff != "" || e.Decided || len(e.Matches) != 0 || len(e.Allow) != 1 {
		t.Errorf("Explain = %+v\nstale (-want +got):\n%s", e, diff)
	}
	if e := g.Explain(fmtRequest(t, fmtDef(t, nil))); !e.Decided || !e.Verdict.Allow || len(e.Stale) != 0 {
		t.Errorf("Explain of the approved definition = %+v", e)
	}
}

// TestDefinitionWarningsSayWhereToRebind: an old allow rule for a
// workspace's tool is rebound by running rules add in that workspace.
func TestDefinitionWarningsSayWhereToRebind(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 2, "rules": [
  {"tool": "fmt", "source": "/home/me/src/app/.basis/tools.json", "decision": "allow"},
  {"tool": "mcp__gh__issue", "source": "/home/me/src/app/.mcp.json", "decision": "allow"},
  {"tool": "spawn", "source": "builtin", "command": ["go", "test", "*"], "decision": "allow"},
  {"tool": "deploy", "source": "/home/me/src/app/.basis/tools.json", "decision": "deny"}
]}`)
	loaded, err := approver.LoadRules(context.Background(), path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	warnings := loaded.Warnings
	var fixes []string
	for _, w := range warnings {
		fixes = append(fixes, w.Fix)
	}
	want := []string{
		"basis -C /home/me/src/app rules add --tool fmt --source /home/me/src/app/.basis/tools.json --allow",
		"basis -C /home/me/src/app rules add --tool mcp__gh__issue --source /home/me/src/app/.mcp.json --allow",
		"basis rules add --tool spawn --source builtin --command 'go test *' --allow",
	}
	if diff := cmp.Diff(want, fixes); diff != "" {
		t.Errorf("fixes (-want +got):\n%s", diff)
	}
}

// TestProtectedPathsAreTighterWhenMore: what a sandbox keeps read-only
// inside its writable directories may grow (tighter) but not shrink
// (looser), unless nothing is writable any more.
func TestProtectedPathsAreTighterWhenMore(t *testing.T) {
	approved := json.RawMessage(`{"sandbox":{"mode":"workspace-write","network":"none","protected":[".envrc"],"write":[]}}`)
	tests := []struct {
		current string
		covered bool
		changes string
	}{
		{`{"sandbox":{"mode":"workspace-write","network":"none","protected":[".envrc"],"write":[]}}`, true, ""},
		{`{"sandbox":{"mode":"workspace-write","network":"none","protected":[".envrc","/srv/keys"],"write":[]}}`, true, ""},
		{`{"sandbox":{"mode":"read-only","network":"none","write":[]}}`, true, ""},
		{`{"sandbox":{"mode":"workspace-write","network":"none","write":[]}}`, false, `sandbox protected removed (was [".envrc"])`},
	}
	for _, tt := range tests {
		ok, changes, err := approver.CompareDefinitions(approved, json.RawMessage(tt.current))
		if err != nil || ok != tt.covered || strings.Join(changes, "; ") != tt.changes {
			t.Errorf("%s: covered %v, changes %q, %v; want %v, %q", tt.current, ok, changes, err, tt.covered, tt.changes)
		}
	}
}
