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
	// Decode into generic values so struct field order and any raw messages
	// inside v are re-encoded with sorted keys.
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
