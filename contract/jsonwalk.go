package contract

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// A walk over the bytes of a document encoding/json has already found
// valid: it finds where strings and nested values end, and allocates
// nothing per token, which matters because [CanonicalInput] runs for every
// call. It is a private copy of the walk in the configfile module, kept
// here so that contract needs nothing but the standard library.

// jsonMember is one key of an object, decoded as encoding/json decodes it,
// and its value.
type jsonMember struct {
	key   string
	value []byte
}

// jsonMembers lists the members of the object raw (valid JSON starting
// with '{') in the order written, duplicates included.
func jsonMembers(raw []byte) []jsonMember {
	out := make([]jsonMember, 0, 8) // most objects a call's JSON holds: one allocation
	i := skipJSONWhitespace(raw, 1) // past {
	for i < len(raw) && raw[i] == '"' {
		keyEnd := skipJSONString(raw, i)
		key := decodeJSONString(raw[i:keyEnd])
		valStart := skipJSONSeparators(raw, keyEnd)
		valEnd := skipJSONValue(raw, valStart)
		out = append(out, jsonMember{key: key, value: raw[valStart:valEnd:valEnd]})
		i = skipJSONSeparators(raw, valEnd)
	}
	return out
}

// jsonElements lists the elements of the array raw (valid JSON starting
// with '[').
func jsonElements(raw []byte) [][]byte {
	var out [][]byte
	i := skipJSONWhitespace(raw, 1) // past [
	for i < len(raw) && raw[i] != ']' {
		end := skipJSONValue(raw, i)
		out = append(out, raw[i:end:end])
		i = skipJSONSeparators(raw, end)
	}
	return out
}

// skipJSONValue returns the end of the valid JSON value starting at i.
func skipJSONValue(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch raw[i] {
	case '"':
		return skipJSONString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				i = skipJSONString(raw, i)
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

// skipJSONString returns the end of the valid JSON string starting at i.
func skipJSONString(raw []byte, i int) int {
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

// decodeJSONString decodes a valid JSON string, as encoding/json would.
func decodeJSONString(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// skipJSONSeparators moves past whitespace and the , and : between tokens.
func skipJSONSeparators(raw []byte, i int) int {
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

func skipJSONWhitespace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}
