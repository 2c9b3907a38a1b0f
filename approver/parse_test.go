//go:build unix

package approver_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/configfile"
	"github.com/google/go-cmp/cmp"
)

func TestParseRules(t *testing.T) {
	data := `{
  "schema": 1,
  "rules": [
    {"tool": "spawn", "source": "builtin", "command": ["go", "test", "*"], "allow": true, "reason": "tests are fine"},
    {"tool": "spawn", "source": "*", "pattern": "*curl*", "allow": false, "reason": "no downloads"},
    {"allow": false, "tool": "deploy", "source": "/repo/.basis/tools.json"},
    {"tool": "mcp__github__search", "allow": true}
  ]
}`
	got, err := approver.ParseRules([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []approver.Rule{
		{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow, Reason: "tests are fine", Number: 1},
		{Tool: "spawn", Source: approver.AnySource, Pattern: "*curl*", Reason: "no downloads", Number: 2},
		{Tool: "deploy", Source: "/repo/.basis/tools.json", Number: 3},
		{Tool: "mcp__github__search", Decision: approver.RuleAllow, Number: 4}, // bound to nothing
	}
	if diff := cmp.Diff(explicit(want), got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	empty, err := approver.ParseRules([]byte(`{"rules": [], "schema": 1}`))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty list = %v, %v", empty, err)
	}
}

// parseErrorCases are files that must be refused. Values that must never
// appear in a message are spelled s3cr3t.
var parseErrorCases = []struct {
	name, data string
}{
	{"empty file", ``},
	{"syntax error", "{\n  \"schema\": 1,\n  \"rules\": [s3cr3t]\n}"},
	{"truncated", `{"schema": 1, "rules": [`},
	{"trailing text", `{"schema": 1, "rules": []} s3cr3t`},
	{"not an object", `["s3cr3t"]`},
	{"unknown top key", `{"schema": 1, "rules": [], "ruels": []}`},
	{"repeated top key", `{"schema": 1, "rules": [], "rules": []}`},
	{"missing schema", `{"rules": []}`},
	{"future schema", `{"schema": 3, "rules": []}`},
	{"schema as a string", `{"schema": "1", "rules": []}`},
	{"schema as a fraction", `{"schema": 1.0, "rules": []}`},
	{"missing rules", `{"schema": 1}`},
	{"rules null", `{"schema": 1, "rules": null}`},
	{"rules an object", `{"schema": 1, "rules": {"tool": "x"}}`},
	{"rule not an object", `{"schema": 1, "rules": ["s3cr3t"]}`},
	{"missing tool", `{"schema": 1, "rules": [{"allow": false}]}`},
	{"tool not a string", `{"schema": 1, "rules": [{"tool": 7, "allow": false}]}`},
	{"tool null", `{"schema": 1, "rules": [{"tool": null, "allow": false}]}`},
	{"invalid tool name", `{"schema": 1, "rules": [{"tool": "s3cr3t value", "allow": false}]}`},
	{"missing allow", `{"schema": 1, "rules": [{"tool": "deploy"}]}`},
	{"allow a string", `{"schema": 1, "rules": [{"tool": "deploy", "allow": "s3cr3t"}]}`},
	{"allow null", `{"schema": 1, "rules": [{"tool": "deploy", "allow": null}]}`},
	{"unknown rule key", `{"schema": 1, "rules": [{"tool": "deploy", "allow": false, "reasn": "s3cr3t"}]}`},
	{"repeated allow", `{"schema": 1, "rules": [{"tool": "deploy", "allow": false, "allow": true}]}`},
	{"pattern and command", `{"schema": 1, "rules": [{"tool": "spawn", "pattern": "*", "command": ["go"], "allow": true}]}`},
	{"empty pattern", `{"schema": 1, "rules": [{"tool": "spawn", "pattern": "", "allow": true}]}`},
	{"pattern not a string", `{"schema": 1, "rules": [{"tool": "spawn", "pattern": ["s3cr3t"], "allow": true}]}`},
	{"empty command", `{"schema": 1, "rules": [{"tool": "spawn", "command": [], "allow": true}]}`},
	{"command a string", `{"schema": 1, "rules": [{"tool": "spawn", "command": "go test s3cr3t", "allow": true}]}`},
	{"command with a number", `{"schema": 1, "rules": [{"tool": "spawn", "command": ["go", 1], "allow": true}]}`},
	{"command with an empty word", `{"schema": 1, "rules": [{"tool": "spawn", "command": ["go", ""], "allow": true}]}`},
	{"reason not a string", `{"schema": 1, "rules": [{"tool": "spawn", "allow": true, "reason": 5}]}`},
	{"third rule bad", `{"schema": 1, "rules": [{"tool": "a", "allow": true}, {"tool": "b", "allow": true}, {"tool": "c", "allow": "s3cr3t"}]}`},
	{"subject key", `{"schema": 1, "rules": [{"tool": "spawn", "subject": "s3cr3t", "allow": true}]}`},
	{"unknown key that is not a key", `{"schema": 1, "rules": [{"tool": "spawn", "allow": true, "s3cr3t value pasted": 1}]}`},
	{"relative source", `{"schema": 1, "rules": [{"tool": "spawn", "source": "s3cr3t/tools.json", "allow": true}]}`},
	{"empty source", `{"schema": 1, "rules": [{"tool": "spawn", "source": "", "allow": true}]}`},
	{"source not a string", `{"schema": 1, "rules": [{"tool": "spawn", "source": true, "allow": true}]}`},
	{"unclean source", `{"schema": 1, "rules": [{"tool": "spawn", "source": "/repo/../s3cr3t/tools.json", "allow": true}]}`},
	{"many problems", "{\"schema\": 1, \"rules\": [\n  {\"tool\": \"a\", \"allow\": \"s3cr3t\"},\n  {\"tool\": \"b\", \"allow\": true, \"colour\": 1},\n  {\"tool\": \"c\"}\n], \"extra\": 1}"},
	{"decision in schema 1", `{"schema": 1, "rules": [{"tool": "deploy", "decision": "deny"}]}`},
	{"allow in schema 2", `{"schema": 2, "rules": [{"tool": "deploy", "allow": false}]}`},
	{"missing decision", `{"schema": 2, "rules": [{"tool": "deploy"}]}`},
	{"unknown decision", `{"schema": 2, "rules": [{"tool": "deploy", "decision": "s3cr3t"}]}`},
	{"decision in another case", `{"schema": 2, "rules": [{"tool": "deploy", "decision": "Allow"}]}`},
	{"decision a boolean", `{"schema": 2, "rules": [{"tool": "deploy", "decision": true}]}`},
	{"alternatives in schema 1", `{"schema": 1, "rules": [{"tool": "spawn", "command": ["git", ["push", "fetch"]], "allow": true}]}`},
	{"empty alternatives", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", []], "decision": "allow"}]}`},
	{"an empty alternative", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", ["push", ""]], "decision": "allow"}]}`},
	{"alternatives nested", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", [["s3cr3t"]]], "decision": "allow"}]}`},
	{"examples in schema 1", `{"schema": 1, "rules": [{"tool": "spawn", "command": ["git", "*"], "allow": true, "match": ["git push"]}]}`},
	{"match not a list", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", "*"], "decision": "allow", "match": "s3cr3t"}]}`},
	{"match empty", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", "*"], "decision": "allow", "match": []}]}`},
	{"a match example that does not match", "{\"schema\": 2, \"rules\": [\n  {\"tool\": \"spawn\", \"command\": [\"git\", [\"push\", \"fetch\"], \"*\"], \"decision\": \"ask\",\n   \"match\": [\"git push origin main\", \"git s3cr3t\"]}]}"},
	{"a not_match example that matches", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", ["push", "fetch"], "*"], "decision": "ask", "not_match": ["git status", "git fetch s3cr3t"]}]}`},
	{"an example a shell would read", `{"schema": 2, "rules": [{"tool": "spawn", "command": ["git", "*"], "decision": "allow", "match": ["git log | s3cr3t"]}]}`},
	{"a pattern example that does not match", `{"schema": 2, "rules": [{"tool": "jenkins_job", "pattern": "*\"job\":\"deploy\"*", "decision": "deny", "match": ["{\"input\": {\"job\": \"s3cr3t\"}}"]}]}`},
	{"a pattern example that is not JSON", `{"schema": 2, "rules": [{"tool": "jenkins_job", "pattern": "*deploy*", "decision": "deny", "match": ["s3cr3t deploy"]}]}`},
	{"examples on a bare rule", `{"schema": 2, "rules": [{"tool": "deploy", "decision": "deny", "not_match": ["s3cr3t"]}]}`},
	{"allow_operator_allow_rules outside the system file", `{"schema": 2, "rules": [], "allow_operator_allow_rules": false}`},
	{"columns in characters", "{\"schema\": 1, \"rules\": [{\"tool\": \"déploiement_é\", \"allow\": \"s3cr3t\"}]}"},
	{"definition on a deny rule", `{"schema": 2, "rules": [{"tool": "fmt", "source": "/r/.basis/tools.json", "decision": "deny", "definition": {"program": "/r/s3cr3t"}}]}`},
	{"definition not an object", `{"schema": 2, "rules": [{"tool": "fmt", "source": "/r/.basis/tools.json", "decision": "allow", "definition": ["s3cr3t"]}]}`},
	{"definition in schema 1", `{"schema": 1, "rules": [{"tool": "fmt", "source": "/r/.basis/tools.json", "allow": true, "definition": {"program": "/r/s3cr3t"}}]}`},
}

// TestParseRulesErrors pins every message in testdata/parse_errors.golden.
func TestParseRulesErrors(t *testing.T) {
	var out strings.Builder
	for _, tt := range parseErrorCases {
		rules, err := approver.ParseRules([]byte(tt.data))
		if err == nil {
			t.Errorf("%s: parsed as %v", tt.name, rules)
			continue
		}
		var re *configfile.Error
		if !errors.As(err, &re) {
			t.Errorf("%s: error %v is not a *configfile.Error", tt.name, err)
		}
		if strings.Contains(strings.ReplaceAll(err.Error(), "ErrCommandSyntax", ""), "s3cr3t") {
			t.Errorf("%s: the message quotes a value from the file: %v", tt.name, err)
		}
		fmt.Fprintf(&out, "%s: %v\n", tt.name, err)
	}
	checkGolden(t, "parse_errors.golden", []byte(out.String()))
}

func TestRulesErrorFields(t *testing.T) {
	_, err := approver.ParseRules([]byte(`{"schema": 1, "rules": [{"tool": "a", "allow": true}, {"tool": "deploy", "allow": "x"}]}`))
	var re *configfile.Error
	if !errors.As(err, &re) {
		t.Fatalf("error = %v", err)
	}
	want := configfile.Error{Line: 1, Column: 83, Subject: "rule 2 (tool deploy)", Err: errors.New(`"allow" must be true or false`)}
	if diff := cmp.Diff(want, *re, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
		t.Errorf("RulesError (-want +got):\n%s", diff)
	}
}

func TestFormatRules(t *testing.T) {
	rules := []approver.Rule{
		{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow, Reason: "tests && vet are fine"},
		{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*"body":"curl *`, Reason: "no <downloads>"},
		{Tool: "deploy", Source: "/repo/.basis/tools.json", Scope: approver.ScopeSession},
		{Tool: "deploy", Source: approver.AnySource},
	}
	data, err := approver.FormatRules(rules, false)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rules.golden.json", data)
	back, err := approver.ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rules {
		rules[i].Scope = approver.ScopeOperator // scope is not written
		rules[i].Number = i + 1                 // the parser numbers rules
	}
	if diff := cmp.Diff(explicit(rules), explicit(back)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	none, err := approver.FormatRules(nil, false)
	if err != nil || string(none) != "{\n  \"schema\": 2,\n  \"rules\": []\n}\n" {
		t.Errorf("FormatRules(nil) = %q, %v", none, err)
	}
	if _, err := approver.FormatRules([]approver.Rule{{Tool: "spawn", Subject: "{}", Decision: approver.RuleAllow}}, false); !errors.As(err, new(*configfile.Error)) {
		t.Errorf("an exact-subject rule was formatted: %v", err)
	}
	if _, err := approver.FormatRules([]approver.Rule{{Tool: "ok"}, {Tool: "not ok"}}, false); err == nil || !strings.HasPrefix(err.Error(), "rule 2:") {
		t.Errorf("an invalid rule was formatted: %v", err)
	}
}

// FuzzParseRules checks that the parser never panics, that what it refuses
// it refuses with a *RulesError quoting no value, and that what it accepts
// survives formatting and parsing again unchanged.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "rules": [{"tool": "spawn", "command": ["go", "test", "*"], "allow": true, "reason": "tests"}]}`))
	f.Add([]byte(`{"schema": 1, "rules": [{"tool": "spawn", "pattern": "*curl*", "allow": false}]}`))
	f.Add([]byte(`{"schema": 1, "rules": []}`))
	f.Add([]byte(`{"schema": 1, "rules": [{"tool": "a", "allow": true, "allow": false}]}`))
	f.Add([]byte(`{"schema": 1, "rules": [{"tool": "a", "source": "/x/tools.json", "allow": true}]}`))
	f.Add([]byte(`{"schema": 2, "rules": [{"tool": "spawn", "source": "builtin", "command": ["git", ["push", "fetch"], "*"], "decision": "ask", "match": ["git push x"], "not_match": ["git status"]}]}`))
	f.Add([]byte(`{"schema": 2, "rules": [{"tool": "j", "pattern": "*\"job\":\"d\"*", "decision": "deny", "match": ["{\"job\":\"d\"}"]}]}`))
	f.Add([]byte(`{"schema": 2, "rules": [{"tool": "fmt", "source": "/r/.basis/tools.json", "decision": "allow", "definition": {"program": "/r/fmt.sh", "files": {"/r/fmt.sh": "sha256:00"}, "n": 1.50, "sandbox": {"mode": "read-only"}}}]}`))
	for _, tt := range parseErrorCases {
		f.Add([]byte(tt.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := approver.ParseRules(data)
		if err != nil {
			var re *configfile.Error
			if !errors.As(err, &re) || !errors.As(err, new(*configfile.Error)) {
				t.Fatalf("error %v is not a *RulesError wrapping ErrInvalidRules", err)
			}
			return
		}
		for _, r := range rules {
			if err := r.Validate(); err != nil {
				t.Fatalf("parsed an invalid rule %v: %v", r, err)
			}
		}
		formatted, err := approver.FormatRules(rules, false)
		if err != nil {
			t.Fatalf("FormatRules of parsed rules: %v", err)
		}
		again, err := approver.ParseRules(formatted)
		if err != nil {
			t.Fatalf("ParseRules of formatted rules: %v\n%s", err, formatted)
		}
		if diff := cmp.Diff(rules, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func TestRuleValidate(t *testing.T) {
	tests := []struct {
		rule approver.Rule
		says string // "" for a valid rule
	}{
		{approver.Rule{Tool: "spawn", Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}, ""},
		{approver.Rule{Tool: "spawn", Pattern: "*curl*"}, ""},
		{approver.Rule{Tool: "deploy"}, ""},
		{approver.Rule{Tool: "spawn", Subject: `{"a":1}`, Decision: approver.RuleAllow}, ""},
		{approver.Rule{Tool: ""}, `"tool" is not a valid tool name`},
		{approver.Rule{Tool: "has space"}, `"tool" is not a valid tool name`},
		{approver.Rule{Tool: "spawn", Pattern: "*", Command: approver.Words("go")}, "at most one"},
		{approver.Rule{Tool: "spawn", Pattern: "*", Subject: "{}"}, "at most one"},
		{approver.Rule{Tool: "spawn", Command: approver.Words("go", "")}, "empty word at position 2"},
		{approver.Rule{Tool: "spawn", Source: "builtin"}, ""},
		{approver.Rule{Tool: "spawn", Source: "*"}, ""},
		{approver.Rule{Tool: "x", Source: "/repo/.basis/tools.json"}, ""},
		{approver.Rule{Tool: "x", Source: "tools.json"}, `"source" must be the absolute, clean path`},
		{approver.Rule{Tool: "x", Source: "/repo/./tools.json"}, `"source" must be the absolute, clean path`},
		{approver.Rule{Tool: "x", Source: "Builtin"}, `"source" must be the absolute, clean path`},
	}
	for _, tt := range tests {
		err := tt.rule.Validate()
		if tt.says == "" {
			if err != nil {
				t.Errorf("Validate(%v) = %v", tt.rule, err)
			}
			continue
		}
		if !errors.As(err, new(*configfile.Error)) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Validate(%v) = %v, want ErrInvalidRules saying %q", tt.rule, err, tt.says)
		}
	}
}

func TestRuleString(t *testing.T) {
	tests := map[string]approver.Rule{
		"allow spawn command go test * from builtin":             {Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow},
		"deny deploy from /repo/.basis/tools.json":               {Tool: "deploy", Source: "/repo/.basis/tools.json"},
		"deny spawn pattern *curl* from any source":              {Tool: "spawn", Source: approver.AnySource, Pattern: "*curl*"},
		"deny spawn pattern *curl*":                              {Tool: "spawn", Pattern: "*curl*", Scope: approver.ScopeWorkspace},
		`allow spawn subject {"a":1} from builtin`:               {Tool: "spawn", Source: approver.BuiltinSource, Subject: `{"a":1}`, Decision: approver.RuleAllow},
		"allow word_count (bound to no source: matches nothing)": {Tool: "word_count", Decision: approver.RuleAllow},
		"deny spawn command rm -rf /tmp from builtin":            {Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("rm", "-rf", "/tmp")},
	}
	for want, r := range tests {
		if got := r.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
