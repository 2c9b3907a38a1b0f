package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on a call's input, applied before any parser of a binding sees it.
const (
	// MaxInputBytes is the largest input a call may carry.
	MaxInputBytes = 4 << 20
	// MaxInputDepth is the deepest nesting of objects and arrays an input
	// may have. encoding/json has its own limit (10,000); this one is far
	// below it, so no program a tool starts meets a pathological document
	// either.
	MaxInputDepth = 64
)

// CanonicalInput reads a call's input strictly and returns the canonical
// bytes of the object it holds: keys sorted, no insignificant whitespace,
// numbers as written, no HTML escaping — the same bytes [CanonicalJSON]
// gives, so what a preview's Subject shows and what a program reads are
// one text. An absent (empty or blank) input is the empty object.
//
// It refuses, wrapping [ErrInvalidInput], anything a program's JSON reader
// could read differently from basis: a value that is not one object, a key
// written twice in one object, two keys equal under Unicode case folding
// ("job" and "Job": some decoders match keys case-insensitively), nesting
// deeper than [MaxInputDepth], or more than [MaxInputBytes]. The error
// names the key's JSON pointer, never a value.
func CanonicalInput(input json.RawMessage) (json.RawMessage, error) {
	w := canonicalWalk{}
	if err := w.read(input); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// DecodedInput is a call's input read once by [DecodeInput]: its canonical
// bytes and the value they hold, from one walk of the input, so that a
// schema check need not decode the input again. Only DecodeInput makes
// one, so the two always agree.
type DecodedInput struct {
	canonical json.RawMessage
	value     any
}

// Canonical returns the input's canonical bytes, as [CanonicalInput]
// returns them. The caller must not modify them.
func (d *DecodedInput) Canonical() json.RawMessage { return d.canonical }

// Value returns the object the input holds, as encoding/json decodes it
// into an any with UseNumber: map[string]any, []any, string, json.Number,
// bool and nil. The caller must not modify it.
func (d *DecodedInput) Value() any { return d.value }

// DecodeInput reads a call's input as strictly as [CanonicalInput] and
// refuses what it refuses, with the same errors; it returns the canonical
// bytes and the decoded object together, from one walk.
func DecodeInput(input json.RawMessage) (*DecodedInput, error) {
	w := canonicalWalk{decode: true}
	if err := w.read(input); err != nil {
		return nil, err
	}
	return &DecodedInput{canonical: w.buf, value: w.value}, nil
}

// canonicalWalk reads an input strictly and writes its canonical form
// straight from the raw text: one walk checks the keys, a second writes
// each object's members sorted, copying numbers and plain strings as
// written. Only a string holding an escape or a byte encoding/json
// rewrites goes through encoding/json's encoder, so the bytes are those a
// decode and an encode give (a differential fuzz test holds the two to
// it), at a fraction of the cost.
type canonicalWalk struct {
	decode bool   // also build value
	buf    []byte // the canonical bytes
	value  any    // the decoded object, when decode
	// scratch and enc encode the strings that cannot be copied as written.
	scratch *bytes.Buffer
	enc     *json.Encoder
}

func (w *canonicalWalk) read(input []byte) error {
	if len(input) > MaxInputBytes {
		return fmt.Errorf("%w: the input is %d bytes; the limit is %d", ErrInvalidInput, len(input), MaxInputBytes)
	}
	doc := bytes.TrimSpace(input)
	if len(doc) == 0 {
		w.buf = json.RawMessage("{}")
		if w.decode {
			w.value = map[string]any{}
		}
		return nil
	}
	if err := checkDepth(input); err != nil {
		return err
	}
	if !json.Valid(input) {
		// The slow reader, only to say where and why it is not JSON.
		return strictRead(input)
	}
	// Valid JSON: the walks over the raw text allocate little per token.
	// This runs for every call, so it is kept cheap.
	if doc[0] != '{' {
		return fmt.Errorf("%w: the input must be a JSON object", ErrInvalidInput)
	}
	if err := checkKeys(doc, nil); err != nil {
		return err
	}
	w.buf = make([]byte, 0, len(doc))
	w.value = w.emit(doc)
	return nil
}

// emit appends the canonical form of the valid JSON value raw and returns
// its decoded value (nil unless w.decode).
func (w *canonicalWalk) emit(raw []byte) any {
	switch raw[0] {
	case '{':
		members := jsonMembers(raw)
		// A key written twice (only CanonicalJSON's raw messages may hold
		// one: CanonicalInput refuses it) counts once, the last, as
		// encoding/json decodes it.
		slices.SortStableFunc(members, func(a, b jsonMember) int { return strings.Compare(a.key, b.key) })
		members = lastOfEach(members)
		var obj map[string]any
		if w.decode {
			obj = make(map[string]any, len(members))
		}
		w.buf = append(w.buf, '{')
		for i, m := range members {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.appendString(m.key)
			w.buf = append(w.buf, ':')
			v := w.emit(m.value)
			if w.decode {
				obj[m.key] = v
			}
		}
		w.buf = append(w.buf, '}')
		if w.decode {
			return obj
		}
		return nil
	case '[':
		elems := jsonElements(raw)
		var arr []any
		if w.decode {
			arr = make([]any, 0, len(elems))
		}
		w.buf = append(w.buf, '[')
		for i, e := range elems {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			v := w.emit(e)
			if w.decode {
				arr = append(arr, v)
			}
		}
		w.buf = append(w.buf, ']')
		if w.decode {
			return arr
		}
		return nil
	case '"':
		if plainJSONString(raw) {
			w.buf = append(w.buf, raw...)
			if w.decode {
				return string(raw[1 : len(raw)-1])
			}
			return nil
		}
		s := decodeJSONString(raw)
		w.appendString(s)
		if w.decode {
			return s
		}
		return nil
	case 't':
		w.buf = append(w.buf, "true"...)
		return true
	case 'f':
		w.buf = append(w.buf, "false"...)
		return false
	case 'n':
		w.buf = append(w.buf, "null"...)
		return nil
	}
	// A number, written as it is (encoding/json keeps a json.Number's text).
	w.buf = append(w.buf, raw...)
	if w.decode {
		return json.Number(raw)
	}
	return nil
}

// lastOfEach keeps the last of each run of members with one key.
func lastOfEach(members []jsonMember) []jsonMember {
	out := members[:0]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		out = append(out, m)
	}
	return out
}

// appendString appends s as encoding/json encodes it without HTML
// escaping.
func (w *canonicalWalk) appendString(s string) {
	if plain(s) {
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '"')
		return
	}
	if w.enc == nil {
		w.scratch = new(bytes.Buffer)
		w.enc = json.NewEncoder(w.scratch)
		w.enc.SetEscapeHTML(false)
	}
	w.scratch.Reset()
	_ = w.enc.Encode(s) // a string always encodes
	w.buf = append(w.buf, bytes.TrimSuffix(w.scratch.Bytes(), []byte("\n"))...)
}

// plainJSONString reports whether the valid JSON string quoted is already
// in the form encoding/json writes: no escape in it, and nothing
// encoding/json would escape or replace.
func plainJSONString(quoted []byte) bool {
	inner := quoted[1 : len(quoted)-1]
	return bytes.IndexByte(inner, '\\') < 0 && plain(inner)
}

// plain reports whether encoding/json (without HTML escaping) writes s
// between quotes as it is: valid UTF-8 with no control character, quote,
// backslash, U+2028 or U+2029 (which it escapes unconditionally).
func plain[T string | []byte](s T) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return false
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

func decodeRune[T string | []byte](s T) (rune, int) {
	switch s := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(s)
	case []byte:
		return utf8.DecodeRune(s)
	}
	return utf8.RuneError, 1
}

// checkKeys refuses a key written twice in one object, or two keys equal
// under case folding, at any depth of v. Keys are decoded as encoding/json
// decodes them, so escapes cannot hide a duplicate. The refused key's JSON
// pointer is built only for the error, from path (the tokens leading to v).
func checkKeys(v []byte, path []string) error {
	switch v[0] {
	case '{':
		members := jsonMembers(v)
		var seen, folded map[string]bool
		if len(members) > smallObject {
			seen = make(map[string]bool, len(members))
			folded = make(map[string]bool, len(members))
		}
		for i, m := range members {
			dup, fold := false, false
			if seen != nil {
				fk := foldKey(m.key)
				dup, fold = seen[m.key], folded[fk]
				seen[m.key], folded[fk] = true, true
			} else {
				// strings.EqualFold is equality under foldKey.
				for _, p := range members[:i] {
					dup = dup || p.key == m.key
					fold = fold || strings.EqualFold(p.key, m.key)
				}
			}
			switch {
			case dup:
				return fmt.Errorf("%w: %s: the key is written twice; programs disagree on which one counts, so write it once", ErrInvalidInput, pointerOf(path, m.key))
			case fold:
				return fmt.Errorf("%w: %s: another key of this object differs from it only in letter case; programs may read them as one, so use one spelling", ErrInvalidInput, pointerOf(path, m.key))
			}
			if m.value[0] == '{' || m.value[0] == '[' {
				if err := checkKeys(m.value, append(path, m.key)); err != nil {
					return err
				}
			}
		}
	case '[':
		for i, e := range jsonElements(v) {
			if e[0] == '{' || e[0] == '[' {
				if err := checkKeys(e, append(path, strconv.Itoa(i))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// smallObject is the most members an object may have for its keys to be
// compared pairwise rather than through maps.
const smallObject = 16

// pointerOf is the JSON pointer of key inside the value at path.
func pointerOf(path []string, key string) string {
	var b strings.Builder
	for _, t := range append(path[:len(path):len(path)], key) {
		b.WriteString("/")
		b.WriteString(pointerToken(t))
	}
	return b.String()
}

// strictRead reads input token by token to say why it is not one JSON
// object; it returns the error.
func strictRead(input []byte) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if _, err := readValue(dec, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: there is more after the JSON object; the input is one object", ErrInvalidInput)
	}
	return fmt.Errorf("%w: not valid JSON", ErrInvalidInput)
}

// checkDepth refuses nesting past MaxInputDepth before the decoder
// recurses into it.
func checkDepth(input []byte) error {
	if nestsDeeper(input, MaxInputDepth) {
		return fmt.Errorf("%w: the input nests objects and arrays more than %d deep", ErrInvalidInput, MaxInputDepth)
	}
	return nil
}

// nestsDeeper reports whether input nests objects and arrays more than
// limit deep.
func nestsDeeper(input []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range input {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// readValue decodes one value, refusing duplicate and case-folded keys.
func readValue(dec *json.Decoder, at string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			folded := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxError(err)
				}
				key, _ := kt.(string)
				ptr := at + "/" + pointerToken(key)
				if _, dup := obj[key]; dup {
					return nil, fmt.Errorf("%w: %s: the key is written twice; programs disagree on which one counts, so write it once", ErrInvalidInput, ptr)
				}
				fk := foldKey(key)
				if folded[fk] {
					return nil, fmt.Errorf("%w: %s: another key of this object differs from it only in letter case; programs may read them as one, so use one spelling", ErrInvalidInput, ptr)
				}
				folded[fk] = true
				v, err := readValue(dec, ptr)
				if err != nil {
					return nil, err
				}
				obj[key] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for i := 0; dec.More(); i++ {
				v, err := readValue(dec, fmt.Sprintf("%s/%d", at, i))
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return arr, nil
		}
	}
	return tok, nil
}

// foldKey maps every rune to the smallest rune of its simple case-folding
// orbit, so two keys fold to one string exactly when strings.EqualFold
// says they are equal ("K", "k" and the Kelvin sign among them).
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, key)
}

// pointerEscaper escapes a JSON pointer token's ~ and /.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointerToken escapes a JSON pointer token and any control character, so
// a key never breaks the message's line.
func pointerToken(t string) string {
	if strings.ContainsAny(t, "~/") {
		t = pointerEscaper.Replace(t)
	}
	if strings.IndexFunc(t, unicode.IsControl) < 0 {
		return t
	}
	q := fmt.Sprintf("%q", t)
	return q[1 : len(q)-1]
}

func syntaxError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%w: not valid JSON (at byte %d)", ErrInvalidInput, syn.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: not valid JSON (it ends before the object is complete)", ErrInvalidInput)
	}
	return fmt.Errorf("%w: not valid JSON", ErrInvalidInput)
}
