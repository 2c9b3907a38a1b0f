//go:build unix

package approver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// TestGateRulesAreBoundToSources is the attack: an approval given for a
// tool in one repository must not run another repository's tool of the
// same name, nor a workspace tool that shadows a global one.
func TestGateRulesAreBoundToSources(t *testing.T) {
	const globalManifest = "/home/me/.config/basis/tools.json"
	wordCount := approver.Rule{Tool: "word_count", Source: repoManifest, Decision: approver.RuleAllow}
	wordCountPattern := approver.Rule{Tool: "word_count", Source: repoManifest, Pattern: `{"command":["./.basis/bin/word_count"]*`, Decision: approver.RuleAllow}
	fmtCheck := approver.Rule{Tool: "fmt_check", Source: globalManifest, Decision: approver.RuleAllow}
	spawnGoTest := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	anywhere := approver.Rule{Tool: "lint", Source: approver.AnySource, Decision: approver.RuleAllow}
	wordCountSubject := `{"command":["./.basis/bin/word_count"],"cwd":"/repo","input":{}}`
	tests := []struct {
		name          string
		rule          approver.Rule
		tool, source  string
		subject       string
		wantAllow     bool
		wantApprovers int32
	}{
		{"a bare rule, its own repository", wordCount, "word_count", repoManifest, wordCountSubject, true, 0},
		{"a bare rule, another repository", wordCount, "word_count", otherManifest, wordCountSubject, false, 1},
		{"a pattern rule, another repository", wordCountPattern, "word_count", otherManifest, wordCountSubject, false, 1},
		{"a pattern rule, its own repository", wordCountPattern, "word_count", repoManifest, wordCountSubject, true, 0},
		{"a global tool's rule, the global tool", fmtCheck, "fmt_check", globalManifest, jenkinsTrigger, true, 0},
		{"a global tool's rule, a workspace tool shadowing it", fmtCheck, "fmt_check", repoManifest, jenkinsTrigger, false, 1},
		{"spawn's rule, spawn", spawnGoTest, "spawn", approver.BuiltinSource, goTestRun, true, 0},
		{"spawn's rule, a declared tool named spawn", spawnGoTest, "spawn", repoManifest, goTestRun, false, 1},
		{"a request without a source", spawnGoTest, "spawn", "", goTestRun, false, 1},
		{"any source, one repository", anywhere, "lint", repoManifest, jenkinsTrigger, true, 0},
		{"any source, another", anywhere, "lint", otherManifest, jenkinsTrigger, true, 0},
		{"any source, a request without a source", anywhere, "lint", "", jenkinsTrigger, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &counter{answer: approver.Answer{Decision: approver.Deny, Reason: "asked"}}
			g, err := approver.NewGate(asker, &approver.GateOptions{Rules: []approver.Rule{tt.rule}})
			if err != nil {
				t.Fatal(err)
			}
			v := g.Authorize(context.Background(), approver.Request{Tool: tt.tool, Source: tt.source, Preview: preview(t, contract.SideEffectProcess, tt.subject)})
			if v.Allow != tt.wantAllow || asker.asked.Load() != tt.wantApprovers {
				t.Errorf("verdict %+v after asking %d times; want allow=%v after %d", v, asker.asked.Load(), tt.wantAllow, tt.wantApprovers)
			}
		})
	}
}

// TestGateWorkspaceDenyNeedsNoSource: a workspace's deny speaks for its own
// workspace, whatever declared the tool.
func TestGateWorkspaceDenyNeedsNoSource(t *testing.T) {
	deny := approver.Rule{Tool: "spawn", Command: approver.Words("curl", "*"), Scope: approver.ScopeWorkspace}
	allow := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("*"), Decision: approver.RuleAllow}
	g, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Rules: []approver.Rule{allow, deny}})
	if err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{approver.BuiltinSource, repoManifest, ""} {
		v := g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: source, Preview: preview(t, contract.SideEffectProcess, cargoTestCurl)})
		if v.Allow || v.Source != approver.SourceRule || v.Rule.Scope != approver.ScopeWorkspace {
			t.Errorf("source %q: verdict %+v, want the workspace's denial", source, v)
		}
	}
}

// TestGateSavesAlwaysAnswers: "always" at the terminal is written to the
// operator's rules file, bound to the call's source, and the next gate —
// the next basis process — does not ask again.
func TestGateSavesAlwaysAnswers(t *testing.T) {
	tests := []struct {
		name      string
		answer    approver.Answer
		request   approver.Request
		wantRule  approver.Rule
		nextAllow bool
	}{
		{
			"always this call",
			approver.Answer{Decision: approver.AllowSession, Persist: true},
			approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, cargoTest)},
			approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: cargoTest, Decision: approver.RuleAllow},
			true,
		},
		{
			"always this tool",
			approver.Answer{Decision: approver.AllowSession, Persist: true, Remember: &approver.Remember{Tool: true}, Reason: "fine"},
			approver.Request{Tool: "jenkins_job", Source: repoManifest, Preview: preview(t, contract.SideEffectExternal, jenkinsTrigger)},
			approver.Rule{Tool: "jenkins_job", Source: repoManifest, Decision: approver.RuleAllow, Reason: "fine"},
			true,
		},
		{
			"deny always",
			approver.Answer{Decision: approver.DenySession, Persist: true, Reason: "never"},
			approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, `{"body":"rm -rf *","commands":[["rm","-rf","*"]],"cwd":"/repo","mode":"command","target":"local"}`)},
			// '*' in the subject becomes '?' so the pattern matches it.
			approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `{"body":"rm -rf ?","commands":[["rm","-rf","?"]],"cwd":"/repo","mode":"command","target":"local"}`, Reason: "never; no rule allows the command rm -rf *"},
			false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
			g, err := approver.NewGate(&counter{answer: tt.answer}, &approver.GateOptions{Save: file.Save})
			if err != nil {
				t.Fatal(err)
			}
			v := g.Authorize(context.Background(), tt.request)
			if v.SavedTo != file.Path || v.SaveErr != nil || !strings.HasSuffix(v.Reason, "; saved as a rule in "+file.Path) {
				t.Errorf("verdict %+v; want it saved to %s, saying so", v, file.Path)
			}
			loaded, err := approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
			if err != nil {
				t.Fatal(err)
			}
			rules := loaded.Rules
			tt.wantRule.File, tt.wantRule.Number = file.Path, 1
			if diff := cmp.Diff(explicit([]approver.Rule{tt.wantRule}), rules); diff != "" {
				t.Errorf("saved rules (-want +got):\n%s", diff)
			}
			next := &counter{answer: approver.Answer{Decision: approver.Deny}}
			g2, err := approver.NewGate(next, &approver.GateOptions{Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			if v := g2.Authorize(context.Background(), tt.request); v.Allow != tt.nextAllow || v.Source != approver.SourceRule || next.asked.Load() != 0 {
				t.Errorf("the next gate: %+v, asked %d times", v, next.asked.Load())
			}
			// Bound to the source: the same name from elsewhere is asked about.
			other := tt.request
			other.Source = otherManifest
			g2.Authorize(context.Background(), other)
			if next.asked.Load() != 1 {
				t.Error("a saved rule matched a tool from another source")
			}
		})
	}
}

func TestGateSaveFailures(t *testing.T) {
	always := approver.Answer{Decision: approver.AllowSession, Persist: true}
	failing := func(approver.Rule) (string, error) { return "", errors.New("disk full") }
	tests := []struct {
		name       string
		save       func(approver.Rule) (string, error)
		source     string
		wantReason string
	}{
		{"no Save", nil, approver.BuiltinSource, "allowed by the approver; kept for this session only, not saved: no place to save the answer as a rule"},
		{"Save fails", failing, approver.BuiltinSource, "allowed by the approver; kept for this session only, not saved: disk full"},
		{"no source", failing, "", "allowed by the approver; kept for this session only, not saved: no place to save the answer as a rule: tool spawn has no source to bind a rule to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &counter{answer: always}
			g, err := approver.NewGate(asker, &approver.GateOptions{Save: tt.save})
			if err != nil {
				t.Fatal(err)
			}
			req := approver.Request{Tool: "spawn", Source: tt.source, Preview: preview(t, contract.SideEffectProcess, cargoTest)}
			v := g.Authorize(context.Background(), req)
			if !v.Allow || v.SaveErr == nil || v.SavedTo != "" || v.Reason != tt.wantReason {
				t.Errorf("verdict %+v\nwant reason %q", v, tt.wantReason)
			}
			// Still remembered for the session.
			if v := g.Authorize(context.Background(), req); !v.Allow || v.Source != approver.SourceRule || asker.asked.Load() != 1 {
				t.Errorf("second call %+v, asked %d times", v, asker.asked.Load())
			}
		})
	}
}

// TestGateDenialsSayWhy: a denial names the command no rule allowed, or
// why the command line could not be analysed, or the rule that denied.
func TestGateDenialsSayWhy(t *testing.T) {
	goTestAll := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	denyRm := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("rm", "*"), File: "/home/me/.config/basis/rules.json", Number: 4}
	tests := []struct {
		name, subject, want string
	}{
		{"a pipe into a command no rule allows",
			`{"body":"go test ./cmp/... | tail -1","commands":[["go","test","./cmp/..."],["tail","-1"]],"cwd":"/repo","mode":"command","target":"local"}`,
			"tool spawn denied: this run allows no consequential calls without a rule that allows them; no rule allows the command tail -1"},
		{"a glob: not analysed",
			`{"body":"go test ./cmp/*","commands":null,"cwd":"/repo","mode":"command","target":"local","unanalysable":"a glob (./cmp/*) expands to names only the shell knows"}`,
			"tool spawn denied: this run allows no consequential calls without a rule that allows them; the command line could not be analysed (a glob (./cmp/*) expands to names only the shell knows), so no command rule can allow it"},
		{"a rule denied",
			goTestThenRm,
			"tool spawn denied by operator rule 4 in /home/me/.config/basis/rules.json (deny spawn command rm * from builtin)"},
	}
	g, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: []approver.Rule{goTestAll, denyRm}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := g.Authorize(context.Background(), approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, tt.subject)})
			if v.Allow || v.Reason != tt.want {
				t.Errorf("reason = %q\nwant     %q", v.Reason, tt.want)
			}
		})
	}
}

func TestGateExplain(t *testing.T) {
	goTestAll := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}
	denyCurl := approver.Rule{Tool: "spawn", Command: approver.Words("curl", "*"), Scope: approver.ScopeWorkspace}
	elsewhere := approver.Rule{Tool: "spawn", Source: repoManifest, Command: approver.Words("tail", "*"), Decision: approver.RuleAllow}
	legacy := approver.Rule{Tool: "spawn", Command: approver.Words("tail", "*"), Decision: approver.RuleAllow}
	asker := &counter{answer: approver.Answer{Decision: approver.Allow}}
	g, err := approver.NewGate(asker, &approver.GateOptions{Rules: []approver.Rule{goTestAll, denyCurl, elsewhere, legacy}})
	if err != nil {
		t.Fatal(err)
	}
	req := func(subject string) approver.Request {
		return approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, subject)}
	}
	pipe := `{"body":"go test ./... | tail -1 | tr a b","commands":[["go","test","./..."],["tail","-1"],["tr","a","b"]],"cwd":"/repo","mode":"command","target":"local"}`
	e := g.Explain(req(pipe))
	want := approver.Explanation{
		Matches: []approver.Rule{goTestAll},
		Inert:   []approver.Rule{elsewhere, legacy},
		Gap:     "no rule allows the command tail -1",
		// What "always" would save at the terminal: the same proposal.
		Allow: []approver.Rule{
			{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("tail", "*"), Decision: approver.RuleAllow, Match: []string{"tail -1"}},
			{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("tr", "a", "*"), Decision: approver.RuleAllow, Match: []string{"tr a b"}},
		},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}
	var commands []string
	for _, r := range e.Allow {
		commands = append(commands, r.AddCommand())
	}
	if diff := cmp.Diff([]string{
		"basis rules add --tool spawn --source builtin --command 'tail *' --allow --match 'tail -1'",
		"basis rules add --tool spawn --source builtin --command 'tr a *' --allow --match 'tr a b'",
	}, commands); diff != "" {
		t.Errorf("AddCommand (-want +got):\n%s", diff)
	}
	if asker.asked.Load() != 0 || len(g.SessionRules()) != 0 {
		t.Error("Explain asked the approver or remembered something")
	}

	// Decided by a deny: no rule to add would help.
	e = g.Explain(req(cargoTestCurl))
	if !e.Decided || e.Verdict.Allow || e.Verdict.Rule == nil || e.Verdict.Rule.Scope != approver.ScopeWorkspace || e.Allow != nil || len(e.Matches) != 1 {
		t.Errorf("Explain of a denied call = %+v", e)
	}
	// Decided by an allow.
	e = g.Explain(req(goTestRun))
	if !e.Decided || !e.Verdict.Allow || e.Gap != "" || e.Allow != nil {
		t.Errorf("Explain of an allowed call = %+v", e)
	}
	// A read passes without rules.
	r := req(goTestRun)
	r.Preview.SideEffect = contract.SideEffectNone
	if e := g.Explain(r); !e.ReadOnly || !e.Verdict.Allow || e.Matches != nil {
		t.Errorf("Explain of a read = %+v", e)
	}
	// Not a command line: the rule to add is a pattern matching exactly
	// this subject.
	e = g.Explain(approver.Request{Tool: "jenkins_job", Source: repoManifest, Preview: preview(t, contract.SideEffectExternal, jenkinsTrigger)})
	wantRule := approver.Rule{Tool: "jenkins_job", Source: repoManifest, Pattern: jenkinsTrigger, Decision: approver.RuleAllow}
	if diff := cmp.Diff([]approver.Rule{wantRule}, e.Allow); diff != "" || e.Decided {
		t.Errorf("Explain of a declared call (-want +got):\n%s", diff)
	}
	if got, want := wantRule.AddCommand(), `basis rules add --tool jenkins_job --source /repo/.basis/tools.json --pattern '`+jenkinsTrigger+`' --allow`; got != want {
		t.Errorf("AddCommand = %s\nwant       %s", got, want)
	}
}

func TestAddCommandQuotes(t *testing.T) {
	tests := []struct {
		rule approver.Rule
		want string
	}{
		{approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}, `basis rules add --tool spawn --source builtin --command 'go test *' --allow`},
		{approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("git", "commit", "-m", "it's done"), Decision: approver.RuleAllow}, `basis rules add --tool spawn --source builtin --command 'git commit -m '\''it'\''\'\'''\''s done'\''' --allow`},
		{approver.Rule{Tool: "deploy", Source: approver.AnySource, Reason: "CI deploys"}, `basis rules add --tool deploy --any-source --deny --reason 'CI deploys'`},
		{approver.Rule{Tool: "x", Source: "/home/me/my tools/tools.json"}, `basis rules add --tool x --source '/home/me/my tools/tools.json' --deny`},
	}
	for _, tt := range tests {
		if got := tt.rule.AddCommand(); got != tt.want {
			t.Errorf("AddCommand(%v) =\n%s\nwant\n%s", tt.rule, got, tt.want)
		}
	}
}

// TestOldRulesFileMatchesNothingEndToEnd: a rules file written before
// sources, with "basis rules add --tool word_count --allow" in it, loaded
// the way the CLI loads it, does not let another repository's word_count
// run unasked.
func TestOldRulesFileMatchesNothingEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(path, []byte(`{"schema": 1, "rules": [{"tool": "word_count", "allow": true}, {"tool": "spawn", "command": ["./.basis/bin/word_count"], "allow": true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := approver.LoadRules(context.Background(), path, approver.ScopeOperator)
	if err != nil || len(loaded.Warnings) != 2 {
		t.Fatalf("LoadRules = %+v, %v", loaded, err)
	}
	rules := loaded.Rules
	g, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []approver.Request{
		{Tool: "word_count", Source: "/evil/.basis/tools.json", Preview: preview(t, contract.SideEffectProcess, `{"command":["./.basis/bin/word_count"],"cwd":"/evil","input":{}}`)},
		{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, `{"body":"./.basis/bin/word_count","commands":[["./.basis/bin/word_count"]],"cwd":"/evil","mode":"command","target":"local"}`)},
	} {
		if v := g.Authorize(context.Background(), req); v.Allow {
			t.Errorf("%s ran unasked: %+v", req.Tool, v)
		}
	}
}
