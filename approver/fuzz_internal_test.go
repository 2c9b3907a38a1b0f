//go:build unix

package approver

import (
	"strings"
	"testing"
)

// FuzzHookAnswer checks the parser of a hook's stdout: it never panics,
// what it accepts is a real decision (with Remember only on a session
// answer), and what it refuses it explains without quoting the output.
func FuzzHookAnswer(f *testing.F) {
	f.Add([]byte(`{"decision":"allow","reason":"fine"}`))
	f.Add([]byte(`{"decision":"deny_session","remember":{"command":["go","*"]}}`))
	f.Add([]byte(`{"decision":"allow","remember":{"tool":true}}`))
	f.Add([]byte(`{"decision":"sure"}`))
	f.Add([]byte(`{"decision":"allow"} {"decision":"deny"}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"decision":"allow"}}{"decision":"deny"}`))
	f.Add([]byte(`{"decision":"deny","decision":"allow"}`))
	f.Add([]byte(`{"DECISION":"allow"}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		a, problem := parseHookAnswer(out)
		if problem != "" {
			if a.Decision != "" {
				t.Fatalf("refused output %q still gave decision %v", out, a.Decision)
			}
			// The fixed advice may happen to contain the output; the rest
			// of the message must not.
			said := strings.ReplaceAll(problem, hookAnswerShape, "")
			if len(out) >= 12 && strings.Contains(said, string(out)) {
				t.Fatalf("the problem quotes the output: %s", problem)
			}
			return
		}
		if !a.Decision.valid() {
			t.Fatalf("accepted %q with no decision", out)
		}
		if a.Remember != nil && (!a.Decision.ForSession() || a.Remember.check() != nil) {
			t.Fatalf("accepted %q with an unusable Remember %+v", out, a.Remember)
		}
	})
}

// FuzzSubjectCommands checks the reading of a Subject's "commands" list:
// it never panics, and a list it returns is usable by command rules.
func FuzzSubjectCommands(f *testing.F) {
	f.Add(`{"body":"go test","commands":[["go","test"]],"cwd":"/r","mode":"command","target":"local"}`)
	f.Add(`{"commands":null}`)
	f.Add(`{"commands":[[]]}`)
	f.Add(`{"commands":[["a",null]]}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, subject string) {
		commands, ok := subjectCommands(subject)
		if !ok {
			if commands != nil {
				t.Fatalf("not usable, yet %q", commands)
			}
			return
		}
		if len(commands) == 0 {
			t.Fatal("an empty list is usable")
		}
		for _, argv := range commands {
			if len(argv) == 0 {
				t.Fatalf("an empty command in %q", commands)
			}
		}
	})
}
