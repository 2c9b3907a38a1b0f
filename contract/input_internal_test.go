package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// referenceDecode is the token-by-token reader CanonicalInput used
// before its fast path (slower, and obviously right), with the value it
// decoded, as encoding/json decodes it with UseNumber.
func referenceDecode(input []byte) ([]byte, any, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return []byte("{}"), map[string]any{}, nil
	}
	if err := checkDepth(input); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	v, err := readValue(dec, "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, ErrInvalidInput
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, ErrInvalidInput
	}
	out, err := CanonicalJSON(v)
	return out, v, err
}

// decodeEncodeCanonical is how CanonicalInput made its bytes before it
// wrote them from its own walk: one decode with UseNumber, one encode
// without HTML escaping.
func decodeEncodeCanonical(input []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// FuzzCanonicalInputAgreesWithReference: the fast path accepts exactly
// what the token reader accepts, with the same bytes — those one decode
// and one encode give — and the same decoded value, and refuses the same
// inputs with the same words.
func FuzzCanonicalInputAgreesWithReference(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":[{"c":"\u0026"}]}`, `{"job":"x","Job":"y"}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1]`, `{"a":1} x`, `{"K":1,"\u212a":2}`, `{"a":"\xff"}`,
		`{"z":[true,false,null,-1.5e+3,{}],"a":{"y":"\u2028\t<&>","x":[]}," ":"\u00e9\ud83d\ude00"}`, `{"\xff":1,"\ufffd":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"a~/b":{"x\ny":1,"X\nY":2}}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"K3":7}`,
		`{"s":"\u007f\u0000\ud800","\u017f":1,"S":2}`, " \t{ \"b\" : [ 1 , 2 ] , \"a\" : \"x\" }\n", "{\"\xff\":\"a\xfe\u2029\",\"\x7f\":1}", "{\"l\":\"a\u2028b\"}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got, err := CanonicalInput([]byte(input))
		want, wantValue, refErr := referenceDecode([]byte(input))
		if (err == nil) != (refErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("CanonicalInput(%q) = %s, %v; the reference says %s, %v", input, got, err, want, refErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("error %v does not wrap ErrInvalidInput", err)
		}
		if err != nil && refErr != ErrInvalidInput && err.Error() != refErr.Error() {
			t.Fatalf("CanonicalInput(%q) says %q; the reference says %q", input, err, refErr)
		}
		if err == nil && len(bytes.TrimSpace([]byte(input))) > 0 && !bytes.Equal(got, decodeEncodeCanonical([]byte(input))) {
			t.Fatalf("CanonicalInput(%q) = %s; a decode and an encode give %s", input, got, decodeEncodeCanonical([]byte(input)))
		}
		d, derr := DecodeInput([]byte(input))
		if (derr == nil) != (err == nil) || derr != nil && derr.Error() != err.Error() {
			t.Fatalf("DecodeInput(%q) refuses with %v; CanonicalInput with %v", input, derr, err)
		}
		if derr == nil && (!bytes.Equal(d.Canonical(), got) || !reflect.DeepEqual(d.Value(), wantValue)) {
			t.Fatalf("DecodeInput(%q) = %s, %#v; want %s, %#v", input, d.Canonical(), d.Value(), got, wantValue)
		}
	})
}

// BenchmarkCanonicalInputOverDecodeEncode measures reading a call's input
// strictly against the least any re-encoding costs — one json.Unmarshal
// and one json.Marshal of the same object — alternated, as a ratio.
func BenchmarkCanonicalInputOverDecodeEncode(b *testing.B) {
	input := []byte(`{"job": "deploy", "params": {"env": "prod", "replicas": 3, "tags": ["a", "b", "c"], "note": "ship it && smile"}, "dry_run": false}`)
	var ours, bare []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := CanonicalInput(input); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		var v any
		if err := json.Unmarshal(input, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(start))
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mo, mb := median(ours), median(bare)
	b.ReportMetric(float64(mo.Nanoseconds()), "canonical-ns")
	b.ReportMetric(float64(mb.Nanoseconds()), "bare-ns")
	b.ReportMetric(float64(mo)/float64(mb), "ratio")
}

// FuzzCanonicalJSONAgreesWithDecodeEncode: CanonicalJSON gives the bytes
// it gave when it decoded what json.Marshal wrote into generic values and
// encoded them again — raw messages with a key written twice, HTML
// characters, escapes and numbers as written included — and fails where
// that failed.
func FuzzCanonicalJSONAgreesWithDecodeEncode(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":{"d":[1,2,{"z":null,"y":true}],"c":"<&>"}}`, `{"a":1,"a":2,"b":{"x":"1","x":"2","X":3}}`,
		`"\u2028\u0000\ud800 <script>"`, `[1.50,-0,1e999,{"\u00e9":"\xff"}]`, `{"":0," ":1,"\u0000":2}`, `12`, `null`,
		strings.Repeat("[", maxDecodeDepth+1) + strings.Repeat("]", maxDecodeDepth+1)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if !json.Valid([]byte(input)) {
			return
		}
		for _, v := range []any{json.RawMessage(input), map[string]any{"tool": "t", "input": json.RawMessage(input)}, []any{json.RawMessage(input), "&"}} {
			got, err := CanonicalJSON(v)
			raw, merr := json.Marshal(v)
			if merr != nil {
				if err == nil {
					t.Fatalf("CanonicalJSON(%q) = %s; Marshal fails: %v", input, got, merr)
				}
				continue
			}
			want, werr := decodeEncode(raw)
			if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("CanonicalJSON(%q) = %s, %v; a decode and an encode give %s, %v", input, got, err, want, werr)
			}
		}
	})
}

// TestCanonicalJSONOfValues: Go values are canonical as a decode and an
// encode of their JSON make them, struct fields sorted among the keys.
func TestCanonicalJSONOfValues(t *testing.T) {
	type inner struct {
		Z string          `json:"z"`
		A json.RawMessage `json:"a"`
	}
	deep := any("x")
	for range maxDecodeDepth + 1 {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		v    any
	}{
		{"struct", inner{Z: "<&>", A: json.RawMessage(`{"k":1,"k":2,"j":[3.0]}`)}},
		{"map", map[string]any{"b": 1.5, "a": []string{"\u2028"}, "c": nil}},
		{"deeper than a decode goes", deep},
	}
	for _, tt := range tests {
		raw, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := decodeEncode(raw)
		got, err := CanonicalJSON(tt.v)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: CanonicalJSON = %.80s, %v; want %.80s, %v", tt.name, got, err, want, werr)
		}
	}
}
