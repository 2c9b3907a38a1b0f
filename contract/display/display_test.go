package display_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/basis-go/basis/contract/display"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "go test ./... && echo ok", "go test ./... && echo ok"},
		{"letters of every script", "déjà vu — 日本語 — עברית", "déjà vu — 日本語 — עברית"},
		{"right-to-left override", "rm -rf /\u202e#/ecnalab", `rm -rf /\u202e#/ecnalab`},
		{"isolates", "a\u2066b\u2067c\u2068d\u2069e", `a\u2066b\u2067c\u2068d\u2069e`},
		{"left-to-right and right-to-left marks", "a\u200eb\u200fc", `a\u200eb\u200fc`},
		{"zero-width space", "safe\u200bcommand", `safe\u200bcommand`},
		{"byte order mark", "\ufeffls", `\ufeffls`},
		{"escape sequence", "ok\x1b[2K\x1b[1A\rallowed", `ok\u001b[2K\u001b[1A\u000dallowed`},
		{"newline and tab", "line1\nline2\tx", `line1\u000aline2\u0009x`},
		{"C1 control", "a\u009bb", `a\u009bb`},
		{"DEL", "a\x7fb", `a\u007fb`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"no-break space", "a\u00a0b", `a\u00a0b`},
		{"private use", "a\ue000b", `a\ue000b`},
		{"private use beyond the BMP", "private \U000F0000 use", `private \U000f0000 use`},
		{"NUL", "nul\x00", `nul\u0000`},
		{"beyond the BMP", "tag\U000e0041", `tag\U000e0041`},
		{"emoji stay", "ok 👍", "ok 👍"},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"the replacement character", "a\ufffdb", `a\ufffdb`},
		{"a backslash before an ordinary letter", `printf 'a\nb'`, `printf 'a\nb'`},
		{"a backslash at the end", `dir\`, `dir\`},
		{"a typed escape", `echo \u202e`, `echo \\u202e`},
		{"a typed byte escape", `\x41`, `\\x41`},
		{"two backslashes", `a\\b`, `a\\\b`},
		{"a backslash before an escaped character", "\\\u202e", `\\\u202e`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := display.Escape(tt.in)
			if got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if back, err := unescape(got); err != nil || back != tt.in {
				t.Errorf("unescape(%q) = %q, %v; want %q", got, back, err, tt.in)
			}
		})
	}
}

// unescape reverses Escape: \\ is a backslash, \xHH a byte, \uHHHH and
// \UHHHHHHHH a character, and any other backslash itself.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i+1]]
		switch {
		case s[i+1] == '\\':
			b.WriteByte('\\')
			i += 2
		case digits > 0:
			if i+2+digits > len(s) {
				return "", strconv.ErrSyntax
			}
			v, err := strconv.ParseUint(s[i+2:i+2+digits], 16, 32)
			if err != nil {
				return "", err
			}
			if digits == 2 {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += 2 + digits
		default:
			b.WriteByte('\\')
			i++
		}
	}
	return b.String(), nil
}

// FuzzEscape: whatever the input, the output is valid UTF-8 holding only
// characters shown as themselves (no control, format, separator other
// than the space, private-use or unassigned code point), and unescape
// gives the input back, so Escape is injective: two texts never look the
// same.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\u202e\u2066\u2069\u200b\u200e\u200f\ufeff", "\x1b[31m", `\u202e`, "\\\u202e", `\\`, "\xff\xfe", "a\\", "\u00a0\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := display.Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if !display.Shown(r) || unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, got, r)
			}
		}
		back, err := unescape(got)
		if err != nil || back != s {
			t.Fatalf("unescape(Escape(%q)) = %q, %v", s, back, err)
		}
	})
}
