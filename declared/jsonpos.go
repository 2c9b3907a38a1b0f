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
// each tool's program, per tool. Nor with a line's length: on a manifest
// written on one line (by a program, say), counting from the line's start
// made a load quadratic. Marks every markEvery bytes hold the column
// reached so far on their line.
type lineIndex struct {
	data   []byte
	starts []int  // offset of the first byte of each line
	marks  []mark // by offset
}

// mark is the 0-based column of the byte at off, an ASCII byte: no
// multi-byte sequence, valid or not, runs across one, so counting runes
// from a mark gives what counting from the line's start would.
type mark struct{ off, col int }

// markEvery is the most bytes a lookup counts runes over.
const markEvery = 1024

func newLineIndex(data []byte) *lineIndex {
	x := &lineIndex{data: data, starts: []int{0}}
	from, col := 0, 0 // the last line start or mark, and its column
	for i, c := range data {
		switch {
		case c == '\n':
			x.starts = append(x.starts, i+1)
			from, col = i+1, 0
		case c < utf8.RuneSelf && i-from >= markEvery:
			col += utf8.RuneCount(data[from:i])
			x.marks = append(x.marks, mark{off: i, col: col})
			from = i
		}
	}
	return x
}

// pos returns the line and column of off.
func (x *lineIndex) pos(off int) (line, col int) {
	off = min(max(off, 0), len(x.data))
	i, found := slices.BinarySearch(x.starts, off)
	if !found {
		i--
	}
	from, base := x.starts[i], 0
	// The last mark at or before off, if it is on off's line.
	if j, found := slices.BinarySearchFunc(x.marks, off, func(m mark, off int) int { return m.off - off }); found || j > 0 {
		if !found {
			j--
		}
		if m := x.marks[j]; m.off >= from {
			from, base = m.off, m.col
		}
	}
	return i + 1, base + utf8.RuneCount(x.data[from:off]) + 1
}
