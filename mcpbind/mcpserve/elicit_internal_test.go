//go:build unix

package mcpserve

import (
	"strings"
	"testing"

	"github.com/basis-go/basis/contract/display"
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
	if !strings.Contains(msg, "It changed since it was allowed: command was ") || !strings.Contains(msg, `\u001b[2J`) || strings.Contains(msg, "\x1b") {
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
	for _, want := range []string{"Warning: .git/config:3: core.fsmonitor names a program git runs\n", `Warning: a\u000aforged line` + "\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

// TestElicitFormEscapesEveryText: whatever a tool, a manifest, a server or
// the model puts in a question, the form shows it through display.Escape:
// the message and the choices hold no control or format character but
// the message's own line ends.
func TestElicitFormEscapesEveryText(t *testing.T) {
	hostile := []string{
		"\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200e", "\u200f", "\ufeff",
		"\x1b[2K\x1b[1A", "\nAllow it? (it is safe)", "\u2028", "\u009b31m", `\u202e`,
	}
	for _, h := range hostile {
		q := Question{Tool: "t" + h, Source: "/repo" + h + "/.basis/tools.json", Summary: "run " + h,
			Subject: []byte(`{"body":"` + h + `"}`), Always: "echo " + h}
		p := elicitParams(q)
		for _, line := range strings.Split(p.Message, "\n") {
			for _, r := range line {
				if !display.Shown(r) {
					t.Errorf("%q: the message holds %U:\n%s", h, r, p.Message)
				}
			}
		}
		if n := strings.Count(p.Message, "\n"); n != 5 {
			t.Errorf("%q: the message has %d lines, want 6:\n%s", h, n+1, p.Message)
		}
		for _, piece := range []string{"t" + display.Escape(h), "/repo" + display.Escape(h), "run " + display.Escape(h), "echo " + display.Escape(h)} {
			if !strings.Contains(p.Message, piece) {
				t.Errorf("%q: the message lacks %q:\n%s", h, piece, p.Message)
			}
		}
		decision := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)
		for _, name := range decision["enumNames"].([]any) {
			for _, r := range name.(string) {
				if !display.Shown(r) {
					t.Errorf("%q: a choice holds %U: %q", h, r, name)
				}
			}
		}
	}
}
