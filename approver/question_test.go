//go:build unix

package approver

import (
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// TestTerminalOffersProposedRules: with rules proposed, the question shows
// them and "a" remembers them, saying what it covers and where it is kept.
func TestTerminalOffersProposedRules(t *testing.T) {
	req := Request{Tool: "spawn", Source: BuiltinSource, Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Summary: "run go test ./pkg/... | tail -1"},
		Proposed: []Rule{
			{Tool: "spawn", Source: BuiltinSource, Command: Words("go", "test", "*"), Decision: RuleAllow},
			{Tool: "spawn", Source: BuiltinSource, Command: Words("tail", "*"), Decision: RuleAllow},
		}}
	q := TerminalQuestion(req)
	if !strings.Contains(q, "  always would allow: go test *; tail *\r\n") || !strings.Contains(q, "[a] always (the rule above)") {
		t.Errorf("question:\n%s", q)
	}
	answer, said := TerminalAnswer('a', req, "/home/me/.config/basis/rules.json")
	want := Answer{Decision: AllowSession, Persist: true, Reason: "allowed at the terminal", Remember: &Remember{Proposed: true}}
	if diff := cmp.Diff(want, answer); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if said != "a: allowed; commands matching go test *; tail * will not be asked about again from now on (saved to /home/me/.config/basis/rules.json)" {
		t.Errorf("echo: %s", said)
	}
	// Without proposals, "a" is the exact call.
	req.Proposed = nil
	if answer, _ := TerminalAnswer('a', req, ""); answer.Remember != nil || answer.Persist {
		t.Errorf("answer without proposals: %+v", answer)
	}
}

// TestTerminalShowsWarnings: the host's warnings are in the question,
// escaped like everything else, and in the request a hook reads.
func TestTerminalShowsWarnings(t *testing.T) {
	req := Request{Tool: "spawn", Source: BuiltinSource, Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Summary: "run git status"},
		Warnings: []string{".git/config:3: core.fsmonitor names a program git runs", "evil\x1b[2J"}}
	q := TerminalQuestion(req)
	for _, want := range []string{"  warning: .git/config:3: core.fsmonitor names a program git runs\r\n", `  warning: evil\u001b[2J` + "\r\n"} {
		if !strings.Contains(q, want) {
			t.Errorf("question lacks %q:\n%s", want, q)
		}
	}
	data, err := req.MarshalJSON()
	if err != nil || !strings.Contains(string(data), `"warnings":[".git/config:3: core.fsmonitor names a program git runs","evil\u001b[2J"]`) {
		t.Errorf("hook request %s, %v", data, err)
	}
	var back Request
	if err := back.UnmarshalJSON(data); err != nil || !cmp.Equal(back.Warnings, req.Warnings) {
		t.Errorf("read back %q, %v", back.Warnings, err)
	}
}
