//go:build unix

package declared

import (
	"slices"
	"unicode/utf8"
)

// The manifest is read with configfile's strict walk, which keeps the
// offset of every key and value. What is left here is declared's own:
// turning offsets into lines and columns fast enough for a manifest of
// thousands of tools, and wording kinds of value for messages.

// lineIndex turns byte offsets of one file into 1-based lines and columns
// counted in characters, as configfile.LineCol does, in time that does
// not grow with the file: a load locates a problem, and a position for
// each tool's program, per tool.
type lineIndex struct {
	data   []byte
	starts []int // offset of the first byte of each line
}

func newLineIndex(data []byte) *lineIndex {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{data: data, starts: starts}
}

// pos returns the line and column of off.
func (x *lineIndex) pos(off int) (line, col int) {
	off = min(max(off, 0), len(x.data))
	i, found := slices.BinarySearch(x.starts, off)
	if !found {
		i--
	}
	return i + 1, utf8.RuneCount(x.data[x.starts[i]:off]) + 1
}
