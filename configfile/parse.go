package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// A document is read as a walk over its bytes rather than unmarshalled
// into structs: that is what lets every problem carry a line and column,
// every key be checked (unknown and duplicate keys alike, which
// encoding/json silently accepts), and every problem in a file be
// reported, not only the first. encoding/json checks the syntax first, so
// the walk only needs to find where strings and nested values end.

// Value is one JSON value of a document and the byte offset where it
// starts.
type Value struct {
	Raw json.RawMessage
	Off int
}

// Member is one key of a JSON object, where the key starts, and its value.
// Key is decoded as encoding/json decodes it.
type Member struct {
	Key    string
	KeyOff int
	Value  Value
}

// SyntaxError is where and why a document is not one JSON value. Its
// message says what to look for and never quotes the text at fault.
type SyntaxError struct {
	// Off is the byte offset of the problem; see [LineCol].
	Off int
	// Kind is what went wrong.
	Kind SyntaxKind
}

// SyntaxKind says how a document fails to be one JSON value. It is a
// string so that a kind prints as itself in a test failure or a log; the
// zero value, "", is no kind.
type SyntaxKind string

// The ways a document can fail to be one JSON value.
const (
	SyntaxInvalid    SyntaxKind = "invalid"    // not JSON at Off
	SyntaxEmpty      SyntaxKind = "empty"      // nothing but whitespace
	SyntaxIncomplete SyntaxKind = "incomplete" // ends inside a value
	SyntaxTrailing   SyntaxKind = "trailing"   // more after the value
)

// Error returns a message that says what to look for.
func (e *SyntaxError) Error() string {
	switch e.Kind {
	case SyntaxEmpty:
		return "the file is empty"
	case SyntaxIncomplete:
		return `the file ends before its JSON is complete; look for a missing }, ] or "`
	case SyntaxTrailing:
		return "there is more after the JSON value ends; the file holds one value"
	}
	return "not valid JSON here; look for a missing comma, colon or quote, a trailing comma, or a comment"
}

// Parse checks that data is exactly one JSON value (surrounding whitespace
// allowed) and returns it.
func Parse(data []byte) (Value, error) {
	if json.Valid(data) {
		start := skipWhitespace(data, 0)
		return Value{Raw: data[start:skipValue(data, start)], Off: start}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc json.RawMessage
	err := dec.Decode(&doc)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return Value{}, &SyntaxError{Off: skipWhitespace(data, int(dec.InputOffset())), Kind: SyntaxTrailing}
	case errors.Is(err, io.EOF):
		return Value{}, &SyntaxError{Kind: SyntaxEmpty}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Value{}, &SyntaxError{Off: len(data), Kind: SyntaxIncomplete}
	case errors.As(err, &syn):
		if syn.Offset >= int64(len(data)) {
			return Value{}, &SyntaxError{Off: len(data), Kind: SyntaxIncomplete}
		}
		// Offset counts the bytes read, the offending one included.
		return Value{}, &SyntaxError{Off: max(int(syn.Offset)-1, 0), Kind: SyntaxInvalid}
	}
	return Value{}, &SyntaxError{Kind: SyntaxInvalid}
}

// Kind names the kind of v: "object", "array", "string", "number",
// "boolean", "null", or "nothing" for an empty value.
func (v Value) Kind() string {
	if len(v.Raw) == 0 {
		return "nothing"
	}
	switch v.Raw[0] {
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

// KindPhrase is [Value.Kind] as a message puts it after "not": "an
// object", "an array", "a string", "a number", "a boolean", "null" or
// "nothing".
func (v Value) KindPhrase() string {
	switch kind := v.Kind(); kind {
	case "object", "array":
		return "an " + kind
	case "null", "nothing":
		return kind
	default:
		return "a " + kind
	}
}

// Members lists the members of an object value in the order written,
// duplicates included; nil for any other kind.
func (v Value) Members() []Member {
	if v.Kind() != "object" {
		return nil
	}
	raw := v.Raw
	var out []Member
	i := skipWhitespace(raw, 1) // past {
	for i < len(raw) && raw[i] == '"' {
		keyEnd := skipString(raw, i)
		key := decodeString(raw[i:keyEnd])
		valStart := skipSeparators(raw, keyEnd)
		valEnd := skipValue(raw, valStart)
		out = append(out, Member{Key: key, KeyOff: v.Off + i, Value: Value{Raw: raw[valStart:valEnd:valEnd], Off: v.Off + valStart}})
		i = skipSeparators(raw, valEnd)
	}
	return out
}

// Elements lists the elements of an array value; nil for any other kind.
func (v Value) Elements() []Value {
	if v.Kind() != "array" {
		return nil
	}
	raw := v.Raw
	var out []Value
	i := skipWhitespace(raw, 1) // past [
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		out = append(out, Value{Raw: raw[i:end:end], Off: v.Off + i})
		i = skipSeparators(raw, end)
	}
	return out
}

// Text decodes a string value; ok is false for any other kind.
func (v Value) Text() (s string, ok bool) {
	if v.Kind() != "string" {
		return "", false
	}
	return decodeString(v.Raw), true
}

// LineCol turns a byte offset of data into a 1-based line and a 1-based
// column counted in characters, as editors count them.
func LineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

// LooksLikeKey reports whether key is safe to quote in a message about an
// unknown key: a short identifier such as "timout_ms". Anything else — a
// long string, spaces, punctuation — may be a value pasted in the wrong
// place, possibly a credential, and is described, not quoted.
func LooksLikeKey(key string) bool {
	if key == "" || len(key) > 40 {
		return false
	}
	for _, c := range key {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '$') {
			return false
		}
	}
	return true
}

// skipValue returns the end of the valid JSON value starting at i.
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
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

func skipWhitespace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}
