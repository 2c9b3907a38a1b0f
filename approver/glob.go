//go:build unix

package approver

import (
	"strings"
	"unicode/utf8"
)

// glob is a compiled pattern: '*' matches any run of characters (slashes,
// quotes and braces included), '?' matches exactly one character, and every
// other byte stands for itself. There is no escape character: a pattern is
// matched against canonical JSON, whose own backslashes must stay literal.
type glob struct {
	pattern string
	// question: '?' is a wildcard. Command words have only '*'.
	question bool
	// prefix and suffix are the literal text before the first wildcard and
	// after the last one, and chunks the literal runs between wildcards:
	// each must appear in a matching string, so most patterns that do not
	// match fail on a substring search before the matcher runs.
	prefix, suffix string
	chunks         []string
	// literal: the pattern has no wildcard at all.
	literal bool
}

// compileGlob compiles a Subject pattern, where '*' and '?' are wildcards.
func compileGlob(pattern string) glob { return compile(pattern, true) }

// compileWord compiles one word of a command rule, where only '*' is.
func compileWord(word string) glob { return compile(word, false) }

func compile(pattern string, question bool) glob {
	wild := "*"
	if question {
		wild = "*?"
	}
	first := strings.IndexAny(pattern, wild)
	if first < 0 {
		return glob{pattern: pattern, question: question, literal: true}
	}
	last := strings.LastIndexAny(pattern, wild)
	chunks := strings.FieldsFunc(pattern[first:last+1], func(r rune) bool { return strings.ContainsRune(wild, r) })
	return glob{pattern: pattern, question: question, prefix: pattern[:first], suffix: pattern[last+1:], chunks: chunks}
}

// match reports whether the whole of s matches the pattern.
func (g *glob) match(s string) bool {
	if g.literal {
		return s == g.pattern
	}
	if !strings.HasPrefix(s, g.prefix) || !strings.HasSuffix(s, g.suffix) {
		return false
	}
	for _, c := range g.chunks {
		if !strings.Contains(s, c) {
			return false
		}
	}
	return matchGlob(g.pattern, s, g.question)
}

// matchGlob matches s against pattern with '*' (and, when question is set,
// '?') as wildcards. It is
// the classic iterative matcher: on a mismatch it returns to the most recent
// '*' and lets it swallow one more character, which is enough because a
// later '*' can absorb anything an earlier one could. Time is at most
// O(len(pattern) * len(s)), with no recursion. Characters are runes: '?' and
// '*' never split a multi-byte character.
func matchGlob(pattern, s string, question bool) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; {
			case c == '*':
				starPx, starSx = px, sx
				px++
				continue
			case c == '?' && question:
				if sx < len(s) {
					_, n := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += n
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if starPx < 0 || starSx >= len(s) {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starSx:])
		starSx += n
		px, sx = starPx+1, starSx
	}
	return true
}
