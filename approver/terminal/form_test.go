//go:build unix

package terminal_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/basis-go/basis/approver/terminal"
	"github.com/google/go-cmp/cmp"
)

// FormDefaults fills a form with its schema's defaults, leaves out an
// optional field without one, and declines a required field without one;
// what is not a flat object of primitives is no form.
func TestFormDefaults(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    terminal.FormAnswer
		wantErr bool
	}{{
		name: "every primitive with its default",
		schema: `{"type": "object", "properties": {"s": {"type": "string", "default": "a"}, "i": {"type": "integer", "default": 3},
			"n": {"type": "number", "default": 1.5}, "b": {"type": "boolean", "default": true}, "e": {"type": "string", "enum": ["x", "y"], "default": "y"},
			"m": {"type": "array", "items": {"enum": ["p", "q"]}, "default": ["q"]}}}`,
		want: terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{
			"s": "a", "i": 3.0, "n": 1.5, "b": true, "e": "y", "m": []any{"q"}}},
	}, {
		name:   "an optional field without a default is left out",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{}},
	}, {
		name:   "no properties is an empty form",
		schema: `{"type": "object"}`,
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{}},
	}, {
		name:   "a required field without a default declines",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}, "t": {"type": "string", "default": "x"}}, "required": ["s"]}`,
		want:   terminal.FormAnswer{Action: terminal.FormDecline},
	}, {
		name:    "a nested object is no form",
		schema:  `{"type": "object", "properties": {"o": {"type": "object"}}}`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}, {
		name:    "a multi-select without choices is no form",
		schema:  `{"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}, {
		name:    "a field without a type is no form",
		schema:  `{"type": "object", "properties": {"a": {}}}`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}, {
		name:    "properties that are no object",
		schema:  `{"type": "object", "properties": ["a"]}`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}, {
		name:    "not an object",
		schema:  `{"type": "string"}`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}, {
		name:    "null",
		schema:  `null`,
		want:    terminal.FormAnswer{Action: terminal.FormDecline},
		wantErr: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := terminal.FormDefaults(json.RawMessage(tt.schema))
			if (err != nil) != tt.wantErr {
				t.Fatalf("FormDefaults: %v, want an error: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FormDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

// With no terminal to ask at, a form and a page are declined, with an
// error saying so, and nothing is written anywhere.
func TestFormWithoutATerminal(t *testing.T) {
	terminals, regular, _, _ := nonTerminals(t)
	schema := json.RawMessage(`{"type": "object", "properties": {"s": {"type": "string"}}}`)
	printed := captureStdoutStderr(t, func() {
		for name, term := range terminals {
			a, err := term.AskForm(context.Background(), "srv", "who?", schema)
			if err == nil || err.Error() != "no terminal to ask at" || a.Action != terminal.FormDecline {
				t.Errorf("%s: AskForm = %+v, %v; want a decline saying there is no terminal", name, a, err)
			}
			action, err := term.AskURL(context.Background(), "srv", "log in", "https://example.com/", nil)
			if err == nil || err.Error() != "no terminal to ask at" || action != terminal.FormDecline {
				t.Errorf("%s: AskURL = %v, %v; want a decline saying there is no terminal", name, action, err)
			}
		}
	})
	if printed != "" {
		t.Errorf("printed %q; want nothing", printed)
	}
	if b, _ := os.ReadFile(regular); len(b) > 0 {
		t.Errorf("the regular file got %q; want nothing", b)
	}
}
