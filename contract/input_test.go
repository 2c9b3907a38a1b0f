package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
)

func TestCanonicalInput(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"sorted, compact", `{ "b": 1, "a": {"d": [1, 2.50], "c": "&&"} }`, `{"a":{"c":"&&","d":[1,2.50]},"b":1}`},
		{"absent is the empty object", " \n", `{}`},
		{"unicode kept", `{"k":"é\u00e9"}`, `{"k":"éé"}`},
	}
	for _, tt := range tests {
		got, err := contract.CanonicalInput(json.RawMessage(tt.input))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: CanonicalInput(%s) = %s, %v; want %s", tt.name, tt.input, got, err, tt.want)
		}
	}
}

func TestCanonicalInputRefuses(t *testing.T) {
	deep := strings.Repeat("[", contract.MaxInputDepth+1) + strings.Repeat("]", contract.MaxInputDepth+1)
	tests := []struct {
		name, input, says string
	}{
		{"duplicate key", `{"job":"deploy","job":"test"}`, "/job: the key is written twice"},
		{"duplicate nested", `{"a":[{"x":1,"x":2}]}`, "/a/0/x: the key is written twice"},
		{"case folded", `{"job":"test","Job":"deploy"}`, "/Job: another key of this object differs from it only in letter case"},
		{"kelvin sign folds to k", "{\"k\":1,\"\u212a\":2}", "differs from it only in letter case"},
		{"too deep", `{"a":` + deep + `}`, "more than 64 deep"},
		{"not an object", `[1]`, "must be a JSON object"},
		{"trailing", `{"a":1} {"a":2}`, "more after the JSON object"},
		{"syntax", `{"a":}`, "not valid JSON"},
		{"truncated", `{"a":1`, "ends before the object is complete"},
		{"too big", `{"a":"` + strings.Repeat("x", contract.MaxInputBytes) + `"}`, "the limit is"},
	}
	for _, tt := range tests {
		got, err := contract.CanonicalInput(json.RawMessage(tt.input))
		if err == nil || !errors.Is(err, contract.ErrInvalidInput) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: CanonicalInput = %s, %v; want ErrInvalidInput saying %q", tt.name, got, err, tt.says)
		}
		if err != nil && (strings.Contains(err.Error(), "deploy") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s: error %q quotes a value or spans lines", tt.name, err)
		}
	}
}

func FuzzCanonicalInput(f *testing.F) {
	f.Add(`{"job":"deploy","job":"test"}`)
	f.Add(`{"a":[{"b":null}],"c":1e3}`)
	f.Add(`{"K":1,"k":2}`)
	f.Fuzz(func(t *testing.T, input string) {
		out, err := contract.CanonicalInput(json.RawMessage(input))
		if err != nil {
			if !errors.Is(err, contract.ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		// Canonical bytes are a fixed point.
		again, err := contract.CanonicalInput(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %s -> %s, %v", out, again, err)
		}
	})
}
