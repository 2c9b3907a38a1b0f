//go:build unix

package terminal

import (
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
