package main

import (
	"io"
	"strings"
	"sync"
	"unicode"
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

// printable drops control characters, escape sequences' introducer among
// them: a tool's output must not move the cursor or restyle the terminal.
func printable(line string) string {
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

// fitWidth cuts s to at most width characters, marking the cut, so the
// line never wraps (a wrapped line could not be erased).
func fitWidth(s string, width int) string {
	if width < 1 {
		width = 1
	}
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}
