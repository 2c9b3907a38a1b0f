// Package display makes text from tools, manifests, servers and models fit
// to show a person who decides whether a call may run: the terminal
// approver's question, the MCP elicitation form of basis serve, basis
// explain. What such text holds is written by whoever wrote the tool or
// the call, and a person reads it as its characters look, so nothing in
// it may change how the rest looks: no escape sequence, no bidirectional
// override or isolate, no invisible character.
//
// It is in the contract module because every module that shows a
// question may import the contract and nothing else in common (mcpbind:
// the contract and the MCP SDK only); the contract package itself holds
// the tool contract only.
package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that is not shown as itself
// written as an escape, as Go writes it in a quoted string: control
// characters, newline and tab among them (\u001b, \u000a), Unicode format
// characters (category Cf: \u202e, \u2066, \u200b, \ufeff), separators
// other than the space (\u00a0, \u2028), private-use and unassigned code
// points, U+FFFD, and bytes that are not UTF-8 (\xff). Everything else is
// left as it is, the space included.
//
// Escape is reversible: a backslash that an escape could follow (before
// "x", "u", "U", another backslash or an escaped character) is written
// "\\", so no two strings give the same text, and a person can tell
// "\u202e" typed in a command from the character U+202E. Other
// backslashes stay single, so a shell command such as printf 'a\nb' reads
// as written.
func Escape(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex(uint32(s[i]), 2))
		case r == '\\':
			if escapedNext(s[i+1:]) {
				b.WriteString(`\\`)
			} else {
				b.WriteByte('\\')
			}
		case Shown(r):
			b.WriteRune(r)
		case r < 0x10000:
			b.WriteString(`\u`)
			b.WriteString(hex(uint32(r), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(hex(uint32(r), 8))
		}
		i += n
	}
	return b.String()
}

// Shown reports whether r is shown as itself: a graphic character (letter,
// mark, number, punctuation, symbol) or the space. It is false for
// U+FFFD, which stands for bytes that were not text.
func Shown(r rune) bool {
	return r != utf8.RuneError && (r == ' ' || unicode.IsPrint(r))
}

// plain reports whether Escape has nothing to do: every character is
// shown and there is no backslash.
func plain(s string) bool {
	for _, r := range s {
		if r == '\\' || !Shown(r) {
			return false
		}
	}
	return true
}

// escapedNext reports whether the text after a backslash begins with what
// would read as the rest of an escape: an escaped character or byte (which
// begins with a backslash), a backslash, or x, u or U.
func escapedNext(rest string) bool {
	if rest == "" {
		return false
	}
	r, n := utf8.DecodeRuneInString(rest)
	if r == utf8.RuneError && n == 1 {
		return true
	}
	return r == '\\' || r == 'x' || r == 'u' || r == 'U' || !Shown(r)
}

func hex(v uint32, digits int) string {
	h := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", digits-len(h)) + h
}
