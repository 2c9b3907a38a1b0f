package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

// referenceCanonical is the token-by-token reader CanonicalInput used
// before its fast path: slower, and obviously right.
func referenceCanonical(input []byte) ([]byte, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return []byte("{}"), nil
	}
	if err := checkDepth(input); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	v, err := readValue(dec, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrInvalidInput
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, ErrInvalidInput
	}
	return CanonicalJSON(v)
}

// FuzzCanonicalInputAgreesWithReference: the fast path accepts exactly
// what the token reader accepts, with the same bytes, and refuses the same
// inputs.
func FuzzCanonicalInputAgreesWithReference(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":[{"c":"\u0026"}]}`, `{"job":"x","Job":"y"}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1]`, `{"a":1} x`, `{"K":1,"\u212a":2}`, `{"a":"\xff"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got, err := CanonicalInput([]byte(input))
		want, refErr := referenceCanonical([]byte(input))
		if (err == nil) != (refErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("CanonicalInput(%q) = %s, %v; the reference says %s, %v", input, got, err, want, refErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("error %v does not wrap ErrInvalidInput", err)
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
