//go:build unix

package mcpbind

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// A config file is read as a token stream rather than unmarshalled into
// structs: that is what lets every problem carry a line and column, every
// key be checked (unknown and duplicate keys alike, which encoding/json
// would silently accept), and every problem in a file be reported, not
// only the first.

// member is one key of a JSON object and its value, with the offsets of
// both in the file.
type member struct {
	key    string
	keyOff int
	val    json.RawMessage
	valOff int
}

// element is one item of a JSON array, with its offset in the file.
type element struct {
	val json.RawMessage
	off int
}

// objectMembers lists the members of raw, a syntactically valid JSON
// object found at offset base of the file, in the order written. The
// file has already been checked by encoding/json, so walking a valid value
// needs only to find where strings and nested values end.
func objectMembers(raw json.RawMessage, base int) []member {
	var out []member
	i := skipWhitespace(raw, 1) // past {
	for i < len(raw) && raw[i] == '"' {
		keyEnd := skipString(raw, i)
		key := decodeString(raw[i:keyEnd])
		valStart := skipSeparators(raw, keyEnd)
		valEnd := skipValue(raw, valStart)
		out = append(out, member{key: key, keyOff: base + i, val: raw[valStart:valEnd:valEnd], valOff: base + valStart})
		i = skipSeparators(raw, valEnd)
	}
	return out
}

// arrayElements lists the elements of raw, a syntactically valid JSON
// array found at offset base of the file.
func arrayElements(raw json.RawMessage, base int) []element {
	var out []element
	i := skipWhitespace(raw, 1) // past [
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		out = append(out, element{val: raw[i:end:end], off: base + i})
		i = skipSeparators(raw, end)
	}
	return out
}

// skipValue returns the end of the valid JSON value starting at i.
func skipValue(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				i = skipString(raw, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(raw) && !strings.ContainsRune(",}] \t\r\n", rune(raw[i])) {
		i++
	}
	return i
}

// skipString returns the end of the valid JSON string starting at i.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// decodeString decodes a valid JSON string, as encoding/json would.
func decodeString(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// skipSeparators moves past whitespace and the , and : between tokens.
func skipSeparators(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonKind names the kind of a valid JSON value, for messages.
func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// syntaxProblem is where and why a file is not one JSON value.
type syntaxProblem struct {
	off int
	err error
}

// checkDocument reads data as one JSON value and returns it with its
// offset, or where the JSON goes wrong. The problem never quotes the text
// at fault: it may be part of a credential.
func checkDocument(data []byte) (json.RawMessage, int, *syntaxProblem) {
	incomplete := &syntaxProblem{off: len(data), err: newProblem(ErrSyntax,
		`the file ends before its JSON is complete; look for a missing }, ] or "`)}
	if json.Valid(data) {
		start := skipWhitespace(data, 0)
		return data[start:skipValue(data, start)], start, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc json.RawMessage
	err := dec.Decode(&doc)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		if _, err := dec.Token(); err != io.EOF {
			return nil, 0, &syntaxProblem{off: skipWhitespace(data, int(dec.InputOffset())),
				err: newProblem(ErrSyntax, "there is more after the JSON object ends; a config file is one object")}
		}
		return doc, skipWhitespace(data, 0), nil
	case errors.Is(err, io.EOF):
		return nil, 0, &syntaxProblem{err: newProblem(ErrSyntax, `the file is empty; an MCP config is an object such as {"mcpServers": {}}`)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, 0, incomplete
	case errors.As(err, &syn):
		if syn.Offset >= int64(len(data)) {
			return nil, 0, incomplete
		}
		// Offset counts the bytes read, the offending one included.
		return nil, 0, &syntaxProblem{off: max(int(syn.Offset)-1, 0), err: newProblem(ErrSyntax,
			"not valid JSON here; look for a missing comma, colon or quote, a trailing comma, or a comment")}
	}
	return nil, 0, &syntaxProblem{err: newProblem(ErrSyntax, "not valid JSON")}
}

func skipWhitespace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// lineCol turns a byte offset into a 1-based line and a 1-based column
// counted in characters.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

func article(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "null", "nothing":
		return kind
	}
	return "a " + kind
}
