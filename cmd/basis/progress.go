package main

import (
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/width"
)

// statusLine shows a running call's progress on a terminal as a single
// line, "[tool] latest line", that each new line replaces and that is
// erased when the call ends. So the terminal's scrollback holds every line
// once — in the result, which is printed after — while a long tool still
// shows that it is alive.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	tool  string
	shown bool
}

// eraseLine returns the cursor to the line's start and clears it.
const eraseLine = "\r\x1b[K"

func (s *statusLine) show(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := fitWidth("["+s.tool+"] "+printable(line), s.width-1)
	io.WriteString(s.w, eraseLine+text)
	s.shown = true
}

// clear erases the line, if one is shown.
func (s *statusLine) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		io.WriteString(s.w, eraseLine)
		s.shown = false
	}
}

// escapeSequence is a terminal control sequence: CSI (colours, cursor
// moves) or OSC (titles, links), which printable removes whole.
var escapeSequence = regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)?)")

// printable removes escape sequences and control characters: a tool's
// output must not move the cursor or restyle the terminal.
func printable(line string) string {
	line = escapeSequence.ReplaceAllString(line, "")
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, line)
}

// fitWidth cuts s to at most width columns, marking the cut, so the line
// never wraps: a wrapped line could not be erased. East Asian wide
// characters take two columns.
func fitWidth(s string, width int) string {
	if width < 1 {
		width = 1
	}
	if columns(s) <= width {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := runeColumns(r)
		if used+w > width-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + "…"
}

func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

func runeColumns(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
