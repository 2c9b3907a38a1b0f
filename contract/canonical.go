package contract

import (
	"bytes"
	"encoding/json"
)

// CanonicalJSON encodes v as the canonical form used for [Preview.Subject]:
// object keys sorted, no insignificant whitespace, numbers as written, and
// no HTML escaping (so "&&" stays "&&" and a rule written by a person
// matches it). The same value always yields the same bytes.
func CanonicalJSON(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if nestsDeeper(raw, maxDecodeDepth) {
		// Past what encoding/json decodes: its error, as before.
		return decodeEncode(raw)
	}
	// Marshal wrote valid JSON, struct fields in their order and raw
	// messages as they are: the walk writes it again with every object's
	// keys sorted, the bytes a decode into generic values and an encode
	// give.
	w := canonicalWalk{buf: make([]byte, 0, len(raw))}
	w.emit(raw)
	return w.buf, nil
}

// maxDecodeDepth is how deep encoding/json decodes (its maxNestingDepth).
const maxDecodeDepth = 10000

// decodeEncode is the canonical form of the valid JSON raw by a decode
// into generic values and an encode.
func decodeEncode(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
