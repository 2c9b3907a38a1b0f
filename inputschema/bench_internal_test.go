package inputschema

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// benchSchema and benchInput are a typical tool's: a few typed
// properties, an enum, a nested object and an array.
var (
	benchSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"job": {"type": "string", "minLength": 1},
			"env": {"enum": ["dev", "staging", "prod"]},
			"params": {"type": "object", "properties": {"branch": {"type": "string"}, "dry_run": {"type": "boolean"}}, "additionalProperties": false},
			"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
		},
		"required": ["job"]
	}`)
	benchInput = json.RawMessage(`{"env":"prod","job":"deploy","params":{"branch":"main","dry_run":true},"tags":["a","b","c"]}`)
)

// BenchmarkCheckBudget measures what the budget costs: Check (metered,
// with its context) against the same validation by the same library with
// no meter, alternating in one run; "ratio" is metered over plain.
func BenchmarkCheckBudget(b *testing.B) {
	s, err := Compile(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	plain, problems := compileSchema(benchSchema, nil)
	if problems != nil {
		b.Fatal(problems)
	}
	ctx := context.Background()
	var metered, unmetered time.Duration
	for b.Loop() {
		start := time.Now()
		if err := s.Check(ctx, "bench", benchInput); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if p := validateInput(plain, benchInput, nil); p != nil {
			b.Fatal(p)
		}
		metered += mid.Sub(start)
		unmetered += time.Since(mid)
	}
	b.ReportMetric(float64(metered.Nanoseconds())/float64(b.N), "metered-ns/op")
	b.ReportMetric(float64(unmetered.Nanoseconds())/float64(b.N), "plain-ns/op")
	b.ReportMetric(float64(metered)/float64(unmetered), "ratio")
}
