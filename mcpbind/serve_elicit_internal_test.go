//go:build unix

package mcpbind

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The form shows what "always" would allow: the proposed command rule when
// there is one, this exact call otherwise.
func TestElicitFormShowsWhatAlwaysAllows(t *testing.T) {
	q := Question{Tool: "spawn", Source: "builtin", Summary: "run go test ./pkg/...", Subject: []byte(`{"body":"go test ./pkg/..."}`)}
	names := func(q Question) []any {
		p := elicitParams(q)
		return p.RequestedSchema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)["enumNames"].([]any)
	}
	if diff := cmp.Diff([]any{"Allow once", "Always allow this (in this workspace)", "Deny"}, names(q)); diff != "" {
		t.Errorf("choices without a proposal (-want +got):\n%s", diff)
	}
	q.Always = "go test *"
	if diff := cmp.Diff([]any{"Allow once", "Always allow: go test *", "Deny"}, names(q)); diff != "" {
		t.Errorf("choices with a proposal (-want +got):\n%s", diff)
	}
	if msg := elicitParams(q).Message; !strings.Contains(msg, "Always would allow: go test *\n") {
		t.Errorf("message does not show the proposed rule:\n%s", msg)
	}
}

// The form says what changed in a tool a rule allowed before, and shows
// it printable: a definition is the repository's text.
func TestElicitFormShowsWhatChanged(t *testing.T) {
	q := Question{Tool: "fmt", Source: "/repo/.basis/tools.json", Summary: "run python3 fmt.py in /repo",
		Changed: "command was [\"./fmt.sh\"], is now [\"python3\",\"fmt.py\"]\x1b[2J"}
	msg := elicitParams(q).Message
	if !strings.Contains(msg, "It changed since it was allowed: command was ") || !strings.Contains(msg, `\x1b[2J`) || strings.Contains(msg, "\x1b") {
		t.Errorf("message does not say what changed, printable:\n%q", msg)
	}
	q.Changed = ""
	if strings.Contains(elicitParams(q).Message, "changed since") {
		t.Error("a question about an unchanged tool says it changed")
	}
}

// The form shows the host's warnings, each on its own line, escaped.
func TestElicitFormShowsWarnings(t *testing.T) {
	q := Question{Tool: "spawn", Source: "builtin", Summary: "run git status", Subject: []byte(`{"body":"git status"}`),
		Warnings: []string{".git/config:3: core.fsmonitor names a program git runs", "a\nforged line"}}
	msg := elicitParams(q).Message
	for _, want := range []string{"Warning: .git/config:3: core.fsmonitor names a program git runs\n", `Warning: a\nforged line` + "\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
