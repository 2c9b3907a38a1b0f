//go:build unix

package approver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseHookAnswerIsStrict: the hook's answer is exactly one JSON
// object, keys spelled exactly, each once. Each of these was once read as
// an answer; now each is a denial that says why.
func TestParseHookAnswerIsStrict(t *testing.T) {
	tests := []struct {
		name, out, problem string
	}{
		{"a second object after the first", `{"decision":"allow"}}{"decision":"deny"}`, "its stdout has more after the JSON object; print exactly one object"},
		{"junk after the object", `{"decision":"allow"}] junk`, "its stdout has more after the JSON object; print exactly one object"},
		{"two objects", `{"decision":"allow"} {"decision":"deny"}`, "its stdout has more after the JSON object; print exactly one object"},
		{"a duplicate key", `{"decision":"deny","decision":"allow"}`, `key "decision" appears more than once; print each key once`},
		{"a duplicate reason", `{"decision":"deny","reason":"a","reason":"b"}`, `key "reason" appears more than once; print each key once`},
		{"a key in another case", `{"DECISION":"allow"}`, `unknown key "DECISION"; the answer has only "decision", "reason" and "remember"`},
		{"a key in mixed case", `{"decision":"deny","Decision":"allow"}`, `unknown key "Decision"; the answer has only "decision", "reason" and "remember"`},
		{"a decision in another case", `{"decision":"ALLOW"}`, `"decision" is not one of allow, deny, allow_session, deny_session`},
		{"a key that is not a key", `{"decision":"allow","ghp_0123456789abcdefghijklmnopqrstuvwxyz0123":1}`, `unknown key (a key of 44 characters that does not look like a key); the answer has only "decision", "reason" and "remember"`},
		{"a duplicate key inside remember", `{"decision":"allow_session","remember":{"tool":false,"tool":true}}`, `"remember" is not usable: key "tool" appears more than once`},
		{"an unknown key inside remember", `{"decision":"allow_session","remember":{"Tool":true}}`, `"remember" is not usable: unknown key "Tool"; it has only "tool", "command" and "proposed"`},
		{"not an object", `["allow"]`, `its stdout is not a JSON object; print {"decision": "allow", "reason": "..."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, problem := parseHookAnswer([]byte(tt.out))
			if problem != tt.problem || a.Decision != "" {
				t.Errorf("parseHookAnswer(%s) = %+v, %q\nwant no decision and %q", tt.out, a, problem, tt.problem)
			}
		})
	}
}

func TestParseHookAnswerAccepts(t *testing.T) {
	tests := []struct {
		out  string
		want Answer
	}{
		{`{"decision":"allow"}`, Answer{Decision: Allow}},
		{"  {\"reason\":\"no\",\"decision\":\"deny\"}\n\n", Answer{Decision: Deny, Reason: "no"}},
		{`{"decision":"allow_session","remember":{"command":["go","test","*"]}}`, Answer{Decision: AllowSession, Remember: &Remember{Command: []string{"go", "test", "*"}}}},
		{`{"decision":"deny_session","remember":{"tool":true}}`, Answer{Decision: DenySession, Remember: &Remember{Tool: true}}},
	}
	for _, tt := range tests {
		a, problem := parseHookAnswer([]byte(tt.out))
		if diff := cmp.Diff(tt.want, a); problem != "" || diff != "" {
			t.Errorf("parseHookAnswer(%s): %s (-want +got):\n%s", tt.out, problem, diff)
		}
	}
}
