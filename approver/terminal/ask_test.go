//go:build linux

// The pseudo-terminal these tests open is Linux's /dev/ptmx.

package terminal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver/terminal"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// ctrlD is what the person presses to end a form: the terminal's
// end-of-file key, which makes a read at the start of a line return
// nothing.
const ctrlD = "\x04"

// A form is asked field by field at the terminal (in its own line mode,
// so the answers are typed ahead here as lines): each answer must parse as
// its field's type, be one of its choices and within its bounds, or it is
// asked again, three times at most; Enter keeps a default; Ctrl-D cancels.
func TestAskForm(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		typed  string
		want   terminal.FormAnswer
		// shown, in this order, on the terminal.
		shown []string
	}{{
		name:   "a string, sent",
		schema: `{"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}}`,
		typed:  "alice\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"name": "alice"}},
		shown:  []string{"basis: MCP server srv asks:\r\n", "  who?\r\n", "  Your name (name) (string): ", "  send these answers to srv? [Y/n] "},
	}, {
		name:   "fields asked in the schema's order, each typed as its field",
		schema: `{"type": "object", "properties": {"z": {"type": "integer"}, "a": {"type": "number"}, "m": {"type": "boolean"}, "b": {"type": "string"}}}`,
		typed:  "-42\n2.5e3\nno\n 12 \ny\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"z": int64(-42), "a": 2500.0, "m": false, "b": "12"}},
		shown:  []string{"  z (integer): ", "  a (number): ", "  m (yes or no): ", "  b (string): "},
	}, {
		name:   "a wrong type is asked again",
		schema: `{"type": "object", "properties": {"i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}}}`,
		typed:  "4.2\n7\nNaN\ninf\n1\nmaybe\nYES\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"i": int64(7), "n": 1.0, "b": true}},
		shown:  []string{"want a whole number", "want a number", "want a number", "want yes or no"},
	}, {
		name: "choices: one of an enum or oneOf, any of a multi-select",
		schema: `{"type": "object", "properties": {"e": {"type": "string", "enum": ["red", "blue"]}, "o": {"type": "string", "oneOf": [{"const": "v1", "title": "First"}]},
			"m": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}, "t": {"type": "array", "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}}}}`,
		typed: "green\nblue\nv1\na,d\nc , a\ny\n\n",
		want: terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{
			"e": "blue", "o": "v1", "m": []string{"c", "a"}, "t": []string{"y"}}},
		shown: []string{"  e (one of: red, blue): ", "want one of: red, blue", "  o (one of: v1): ", "  m (any of: a, b, c; separate with commas): ", `"d" is not one of the choices`, "  t (any of: x, y; separate with commas): "},
	}, {
		name: "minimum and maximum: a number's value, a string's length, a multi-select's count",
		schema: `{"type": "object", "properties": {"i": {"type": "integer", "minimum": 1, "maximum": 10}, "n": {"type": "number", "minimum": -0.5},
			"s": {"type": "string", "minLength": 2, "maxLength": 3}, "m": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"enum": ["a", "b", "c"]}}}}`,
		typed: "0\n11\n10\n-1\n-0.5\nx\nabcd\néèê\na,b,c\nb\n\n",
		want: terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{
			"i": int64(10), "n": -0.5, "s": "éèê", "m": []string{"b"}}},
		shown: []string{"  i (integer; at least 1; at most 10): ", "want at least 1\r\n", "want at most 10\r\n", "want at least -0.5\r\n",
			"want at least 2 characters", "want at most 3 characters", "want at most 2 choices"},
	}, {
		name:   "Enter keeps a default and leaves an optional field out",
		schema: `{"type": "object", "properties": {"d": {"type": "integer", "default": 3}, "o": {"type": "string"}, "l": {"type": "array", "items": {"enum": ["a"]}, "default": ["a"]}}}`,
		typed:  "\n\n\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"d": 3.0, "l": []any{"a"}}},
		shown:  []string{"  d (integer) [3]: ", "  o (string): ", `  l (any of: a; separate with commas) [["a"]]: `},
	}, {
		name:   "a required field must be answered",
		schema: `{"type": "object", "properties": {"r": {"type": "string"}}, "required": ["r"]}`,
		typed:  "\nbob\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"r": "bob"}},
		shown:  []string{"  r (required; string): ", "  a value is required\r\n", "  r (required; string): "},
	}, {
		name:   "three answers a field cannot take decline the form",
		schema: `{"type": "object", "properties": {"i": {"type": "integer"}, "later": {"type": "string"}}}`,
		typed:  "a\nb\nc\nnever asked\n",
		want:   terminal.FormAnswer{Action: terminal.FormDecline},
		shown:  []string{"want a whole number", "want a whole number", "want a whole number", "  declined\r\n"},
	}, {
		name:   "three empty answers to a required field decline the form",
		schema: `{"type": "object", "properties": {"r": {"type": "string"}}, "required": ["r"]}`,
		typed:  "\n\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormDecline},
		shown:  []string{"a value is required", "a value is required", "a value is required", "  declined\r\n"},
	}, {
		name:   "not sent is a decline",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		typed:  "x\nn\n",
		want:   terminal.FormAnswer{Action: terminal.FormDecline},
		shown:  []string{"send these answers to srv? [Y/n] ", "  declined\r\n"},
	}, {
		name:   "Ctrl-D at a field cancels",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}, "t": {"type": "string"}}}`,
		typed:  "x\n" + ctrlD,
		want:   terminal.FormAnswer{Action: terminal.FormCancel},
		shown:  []string{"  t (string): ", "  cancelled\r\n"},
	}, {
		name:   "Ctrl-D at the last question cancels",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		typed:  "x\n" + ctrlD,
		want:   terminal.FormAnswer{Action: terminal.FormCancel},
		shown:  []string{"send these answers to srv? [Y/n] ", "  cancelled\r\n"},
	}, {
		name:   "a field named twice is asked once",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}, "s": {"type": "integer"}}}`,
		typed:  "5\n\n",
		want:   terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"s": int64(5)}},
		shown:  []string{"  s (integer): ", "send these answers"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPTY(t)
			typeAhead(t, p, tt.typed+ctrlD) // nothing more: a form that reads on is cancelled
			term := &terminal.Terminal{TTY: p.slave}
			got, err := term.AskForm(context.Background(), "srv", "who?", json.RawMessage(tt.schema))
			if err != nil {
				t.Errorf("AskForm: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AskForm (-want +got):\n%s", diff)
			}
			shownInOrder(t, p, tt.shown)
		})
	}
}

// shownInOrder waits until the terminal showed each of texts, one after
// the other.
func shownInOrder(t *testing.T, p *pty, texts []string) {
	t.Helper()
	inOrder := func(rest string) bool {
		for _, s := range texts {
			i := strings.Index(rest, s)
			if i < 0 {
				return false
			}
			rest = rest[i+len(s):]
		}
		return true
	}
	p.waitUntil(t, fmt.Sprintf("%q in this order", texts), inOrder)
}

// typeAhead types lines before the question, with the terminal's echo
// off so that what it shows is only what was written to it.
func typeAhead(t *testing.T, p *pty, typed string) {
	t.Helper()
	raw, err := p.slave.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	raw.Control(func(fd uintptr) {
		var tio *unix.Termios
		if tio, err = unix.IoctlGetTermios(int(fd), unix.TCGETS); err == nil {
			tio.Lflag &^= unix.ECHO
			err = unix.IoctlSetTermios(int(fd), unix.TCSETS, tio)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	p.press(t, typed)
}

// What a server writes — its name, message, titles, choices, defaults,
// a URL — cannot move the cursor or clear the screen.
func TestAskFormEscapesWhatTheServerWrote(t *testing.T) {
	p := openPTY(t)
	typeAhead(t, p, "\n\n")
	term := &terminal.Terminal{TTY: p.slave}
	schema := `{"type": "object", "properties": {"f\u001b[1A": {"type": "string", "title": "T\u001b[2J", "description": "D\u001b]0;x\u0007",
		"enum": ["e\u001b[H"], "default": "d\u001b[K"}}}`
	if _, err := term.AskForm(context.Background(), "s\u001b[2J", "m\u001b[2J", json.RawMessage(schema)); err != nil {
		t.Fatal(err)
	}
	p.press(t, "n\n")
	if _, err := term.AskURL(context.Background(), "s\u001b[2J", "m\u001b[2J", "https://x/\u001b[2J", nil); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "open it? [y/N] ", 1)
	if shown := p.output(); strings.ContainsAny(shown, "\x1b\x07") {
		t.Errorf("an escape sequence reached the terminal:\n%q", shown)
	}
}

// A form ends when its context does, as cancelled, and the terminal it was
// given is left as it was: the next form reads from it.
func TestAskFormEndsWithItsContext(t *testing.T) {
	p := openPTY(t)
	term := &terminal.Terminal{TTY: p.slave}
	schema := json.RawMessage(`{"type": "object", "properties": {"s": {"type": "string"}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		a   terminal.FormAnswer
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := term.AskForm(ctx, "srv", "", schema)
		done <- result{a, err}
	}()
	p.waitFor(t, "  s (string): ", 1)
	cancel()
	r := <-done
	if r.a.Action != terminal.FormCancel || !errors.Is(r.err, context.Canceled) {
		t.Errorf("AskForm = %+v, %v; want cancel, context.Canceled", r.a, r.err)
	}
	p.waitFor(t, "  cancelled\r\n", 1)

	p.press(t, "again\n\n")
	a, err := term.AskForm(context.Background(), "srv", "", schema)
	want := terminal.FormAnswer{Action: terminal.FormAccept, Content: map[string]any{"s": "again"}}
	if diff := cmp.Diff(want, a); err != nil || diff != "" {
		t.Errorf("the next form on the same terminal: %v (-want +got):\n%s", err, diff)
	}
}

// AskURL shows the page and asks whether to open it: yes opens it with
// open, and tells the person to open it when open is nil or fails.
func TestAskURL(t *testing.T) {
	const url = "https://example.com/login?x=1"
	failing := func(string) error { return errors.New("no browser") }
	tests := []struct {
		name       string
		typed      string
		open       func(string) error
		want       terminal.FormAction
		wantOpened bool
		shown      []string
		notShown   string
	}{
		{name: "yes opens it", typed: "y\n", want: terminal.FormAccept, wantOpened: true,
			shown: []string{"basis: MCP server srv asks you to open a page:\r\n", "  log in\r\n", "  " + url + "\r\n", "  open it? [y/N] "}, notShown: "open it in your browser"},
		{name: "yes without a way to open it", typed: "yes\n", want: terminal.FormAccept, open: nil,
			shown: []string{"  open it? [y/N] ", "  open it in your browser, then come back\r\n"}},
		{name: "yes, and opening it fails", typed: "Y\n", want: terminal.FormAccept, open: failing,
			shown: []string{"  open it in your browser, then come back\r\n"}},
		{name: "no", typed: "n\n", want: terminal.FormDecline, notShown: "open it in your browser"},
		{name: "Enter is no", typed: "\n", want: terminal.FormDecline},
		{name: "not an answer is asked again", typed: "perhaps\ny\n", want: terminal.FormAccept, wantOpened: true,
			shown: []string{"  open it? [y/N] ", "  open it? [y/N] "}},
		{name: "Ctrl-D cancels", typed: ctrlD, want: terminal.FormCancel, notShown: "open it in your browser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPTY(t)
			typeAhead(t, p, tt.typed+ctrlD) // nothing more: a form that reads on is cancelled
			var opened []string
			open := tt.open
			if tt.wantOpened {
				open = func(u string) error { opened = append(opened, u); return nil }
			}
			term := &terminal.Terminal{TTY: p.slave}
			got, err := term.AskURL(context.Background(), "srv", "log in", url, open)
			if err != nil || got != tt.want {
				t.Errorf("AskURL = %v, %v; want %v", got, err, tt.want)
			}
			var wantOpened []string
			if tt.wantOpened {
				wantOpened = []string{url}
			}
			if diff := cmp.Diff(wantOpened, opened); diff != "" {
				t.Errorf("opened (-want +got):\n%s", diff)
			}
			shownInOrder(t, p, tt.shown)
			if tt.notShown != "" && strings.Contains(p.output(), tt.notShown) {
				t.Errorf("the terminal shows %q:\n%q", tt.notShown, p.output())
			}
		})
	}
}
