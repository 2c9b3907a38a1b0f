package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
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
	if len(input) > MaxInputBytes {
		return nil, fmt.Errorf("%w: the input is %d bytes; the limit is %d", ErrInvalidInput, len(input), MaxInputBytes)
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if err := checkDepth(input); err != nil {
		return nil, err
	}
	if !json.Valid(input) {
		// The slow reader, only to say where and why it is not JSON.
		return nil, strictRead(input)
	}
	// Valid JSON: the keys are checked on the raw text, whose walk
	// allocates nothing per token, then one decode and one encode give the
	// canonical bytes. This runs for every call, so it is kept cheap.
	doc := bytes.TrimSpace(input)
	if doc[0] != '{' {
		return nil, fmt.Errorf("%w: the input must be a JSON object", ErrInvalidInput)
	}
	if err := checkKeys(doc, ""); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxError(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkKeys refuses a key written twice in one object, or two keys equal
// under case folding, at any depth of v. Keys are decoded as encoding/json
// decodes them, so escapes cannot hide a duplicate.
func checkKeys(v []byte, at string) error {
	switch v[0] {
	case '{':
		members := jsonMembers(v)
		seen := make(map[string]bool, len(members))
		folded := make(map[string]bool, len(members))
		for _, m := range members {
			ptr := at + "/" + pointerToken(m.key)
			if seen[m.key] {
				return fmt.Errorf("%w: %s: the key is written twice; programs disagree on which one counts, so write it once", ErrInvalidInput, ptr)
			}
			fk := foldKey(m.key)
			if folded[fk] {
				return fmt.Errorf("%w: %s: another key of this object differs from it only in letter case; programs may read them as one, so use one spelling", ErrInvalidInput, ptr)
			}
			seen[m.key], folded[fk] = true, true
			if err := checkKeys(m.value, ptr); err != nil {
				return err
			}
		}
	case '[':
		for i, e := range jsonElements(v) {
			if err := checkKeys(e, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
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
			if depth > MaxInputDepth {
				return fmt.Errorf("%w: the input nests objects and arrays more than %d deep", ErrInvalidInput, MaxInputDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
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
