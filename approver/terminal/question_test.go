//go:build unix

package terminal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
	"github.com/google/go-cmp/cmp"
)

// TestTerminalOffersProposedRules: with rules proposed, the question shows
// them and "a" remembers them, saying what it covers and where it is kept.
func TestTerminalOffersProposedRules(t *testing.T) {
	req := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Summary: "run go test ./pkg/... | tail -1"},
		Proposed: []approver.Rule{
			{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow},
			{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("tail", "*"), Decision: approver.RuleAllow},
		}}
	q := question(req)
	if !strings.Contains(q, "  always would allow: go test *; tail *\r\n") || !strings.Contains(q, "[a] always (the rule above)") {
		t.Errorf("question:\n%s", q)
	}
	got, said := answer('a', req, "/home/me/.config/basis/rules.json")
	want := approver.Answer{Decision: approver.AllowSession, Persist: true, Reason: "allowed at the terminal", Remember: &approver.Remember{Proposed: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if said != "a: allowed; commands matching go test *; tail * will not be asked about again from now on (saved to /home/me/.config/basis/rules.json)" {
		t.Errorf("echo: %s", said)
	}
	// Without proposals, "a" is the exact call.
	req.Proposed = nil
	if got, _ := answer('a', req, ""); got.Remember != nil || got.Persist {
		t.Errorf("answer without proposals: %+v", got)
	}
}

// TestTerminalShowsWarnings: the host's warnings are in the question,
// escaped like everything else, and in the request a hook reads.
func TestTerminalShowsWarnings(t *testing.T) {
	req := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Summary: "run git status"},
		Warnings: []string{".git/config:3: core.fsmonitor names a program git runs", "evil\x1b[2J"}}
	q := question(req)
	for _, want := range []string{"  warning: .git/config:3: core.fsmonitor names a program git runs\r\n", `  warning: evil\u001b[2J` + "\r\n"} {
		if !strings.Contains(q, want) {
			t.Errorf("question lacks %q:\n%s", want, q)
		}
	}
	data, err := req.MarshalJSON()
	if err != nil || !strings.Contains(string(data), `"warnings":[".git/config:3: core.fsmonitor names a program git runs","evil\u001b[2J"]`) {
		t.Errorf("hook request %s, %v", data, err)
	}
	var back approver.Request
	if err := back.UnmarshalJSON(data); err != nil || !cmp.Equal(back.Warnings, req.Warnings) {
		t.Errorf("read back %q, %v", back.Warnings, err)
	}
}

// hostileText is what a tool, a manifest or a model can put in a question
// to change how it reads: bidirectional overrides and isolates, invisible
// characters, escape sequences, a line of its own, and an escape typed
// out to pass for one.
var hostileText = []string{
	"\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200e", "\u200f", "\ufeff",
	"\x1b[2K\x1b[1A", "\r\n  [y] allow once", "\u2028", "\x9b31m", `\u202e`,
}

// TestTerminalQuestionShowsNothingThatActs: every piece of the question is
// escaped by display.Escape, the one function every approver's text goes
// through, so only the question's own line ends are not shown characters.
func TestTerminalQuestionShowsNothingThatActs(t *testing.T) {
	for _, h := range hostileText {
		req := approver.Request{Tool: "t" + h, Preview: contract.Preview{SideEffect: contract.SideEffectProcess,
			Summary: "run " + h, Subject: []byte(`{"body":"` + h + `"}`)},
			Proposed: []approver.Rule{{Tool: "spawn", Command: approver.Words("echo", h), Decision: approver.RuleAllow}}}
		q := question(req)
		for _, line := range strings.Split(strings.TrimPrefix(q, "\r\n"), "\r\n") {
			for _, r := range line {
				if !display.Shown(r) {
					t.Errorf("%q: the question holds %U:\n%s", h, r, q)
				}
			}
		}
		for _, piece := range []string{"t" + display.Escape(h), "run " + display.Escape(h), display.Escape(h)} {
			if !strings.Contains(q, piece) {
				t.Errorf("%q: the question lacks %q:\n%s", h, piece, q)
			}
		}
		_, said := answer('a', req, "/config/rules\u202e.json")
		for _, r := range said {
			if !display.Shown(r) {
				t.Errorf("%q: the echo holds %U: %q", h, r, said)
			}
		}
	}
	// A typed escape does not pass for the character it names.
	typed := question(approver.Request{Tool: "t", Preview: contract.Preview{Summary: `\u202e`}})
	char := question(approver.Request{Tool: "t", Preview: contract.Preview{Summary: "\u202e"}})
	if typed == char {
		t.Errorf("a typed \\u202e and the character U+202E read the same:\n%s", typed)
	}
}

// TestTerminalSaysWhatChanged: a tool an allow rule approved before it
// changed is asked about again, and the question says which rule allowed
// it and what changed since, escaped like everything else.
func TestTerminalSaysWhatChanged(t *testing.T) {
	const source = "/repo/.basis/tools.json"
	dir := filepath.Join(t.TempDir(), "config\x1b[2J")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(path, []byte(`{"schema": 2, "rules": [
  {"tool": "fmt", "source": "`+source+`", "decision": "allow", "definition": {"program": "/repo/fmt.sh", "side_effect": "process"}}
]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, err := approver.LoadRules(context.Background(), path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	changed := "  changed since operator rule 1 in " + display.Escape(path) + " allowed it: "
	for _, tt := range []struct {
		name, current string
		want          string // the question's line; "" when it has none
	}{
		{"the program changed", `{"program": "/usr/bin/python3", "side_effect": "process"}`,
			changed + `program was "/repo/fmt.sh", is now "/usr/bin/python3"` + "\r\n"},
		{"two things changed", `{"program": "/repo/fmt.sh", "side_effect": "external", "network": true}`,
			changed + `network added: true; side_effect was "process", is now "external"` + "\r\n"},
		{"unchanged: the rule allows it, nobody asked", `{"program": "/repo/fmt.sh", "side_effect": "process"}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []approver.Request
			gate, err := approver.NewGate(approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
				asked = append(asked, req)
				return approver.Answer{Decision: approver.Deny}, nil
			}), &approver.GateOptions{Rules: rules.Rules})
			if err != nil {
				t.Fatal(err)
			}
			v := gate.Authorize(context.Background(), approver.Request{Tool: "fmt", Source: source,
				Preview:    contract.Preview{SideEffect: contract.SideEffectProcess, Summary: "format the code"},
				Definition: json.RawMessage(tt.current)})
			if tt.want == "" {
				if !v.Allow || len(asked) != 0 {
					t.Fatalf("verdict %+v, asked %d times; want the rule to allow it", v, len(asked))
				}
				return
			}
			if len(asked) != 1 {
				t.Fatalf("asked %d times; want once", len(asked))
			}
			q := question(asked[0])
			if !strings.Contains(q, tt.want) {
				t.Errorf("question:\n%q\nwant the line\n%q", q, tt.want)
			}
			if strings.ContainsRune(q, '\x1b') {
				t.Errorf("question holds a raw escape:\n%q", q)
			}
		})
	}
}
