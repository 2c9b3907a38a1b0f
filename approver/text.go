//go:build unix

package approver

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxReasonDetail bounds what an error from elsewhere (a hook's stderr, an
// approver's error) adds to a reason the model reads.
const maxReasonDetail = 300

// oneLine makes s fit in a reason: lines joined with " / ", other control
// characters escaped, and at most max bytes, cut at a character boundary
// with "..." when longer.
func oneLine(s string, max int) string {
	lines := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	s = printable(strings.Join(lines, " / "))
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// printable escapes what a terminal would interpret rather than show:
// control characters (escape sequences among them), invalid UTF-8, and
// format characters such as right-to-left overrides. A subject shown to a
// person must not be able to redraw the question it is part of.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if !showable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case showable(r):
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// showable: graphic characters and the plain space. unicode.IsPrint already
// excludes control and format characters.
func showable(r rune) bool {
	return r != utf8.RuneError && (r == ' ' || unicode.IsPrint(r))
}
