package inputschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
	"github.com/google/go-cmp/cmp"
)

// branch is one alternative of the pathological schemas: an object whose
// property x is checked against #/DEFS/n again.
func branch(defs string) string {
	return `{"type": "object", "properties": {"x": {"$ref": "#/` + defs + `/n"}}}`
}

// nested is an input of depth objects, each x of the one before, ending
// in a number, which no branch accepts.
func nested(depth int) string {
	return strings.Repeat(`{"x": `, depth) + "1" + strings.Repeat("}", depth)
}

// dag is a schema with no recursion whose property a goes through depth
// levels of alternatives, each naming the next level twice (alts makes a
// level from the next level's reference): 2^depth evaluations of the last
// level for any value of a.
func dag(depth int, alts func(next string) string, last string) string {
	var defs []string
	for i := range depth {
		defs = append(defs, fmt.Sprintf(`"d%d": %s`, i, alts(fmt.Sprintf(`{"$ref": "#/$defs/d%d"}`, i+1))))
	}
	defs = append(defs, fmt.Sprintf(`"d%d": %s`, depth, last))
	return `{"$defs": {` + strings.Join(defs, ", ") + `}, "properties": {"a": {"$ref": "#/$defs/d0"}}}`
}

func anyOfTwice(next string) string { return `{"anyOf": [` + next + `, ` + next + `]}` }

// oneOfTwice matches through its first branch; the second evaluates the
// next level too before it fails, as oneOf must try it.
func oneOfTwice(next string) string {
	return `{"oneOf": [` + next + `, {"allOf": [` + next + `, false]}]}`
}

// pathological are schemas whose check takes exponentially many steps
// (2^depth and more) for a small input; at depth 40 each would run for
// hours without the budget.
var pathological = []struct {
	name string
	make func(depth int) (schema, input string)
}{
	{"anyOf of two branches through the same $ref, failing at the bottom", func(depth int) (string, string) {
		return `{"$defs": {"n": {"anyOf": [` + branch("$defs") + `, ` + branch("$defs") + `]}}, "properties": {"x": {"$ref": "#/$defs/n"}}}`, nested(depth)
	}},
	{"the same under not, which the input passes", func(depth int) (string, string) {
		return `{"$defs": {"n": {"anyOf": [` + branch("$defs") + `, ` + branch("$defs") + `]}}, "not": {"properties": {"x": {"$ref": "#/$defs/n"}}}}`, nested(depth)
	}},
	// Under not, subschemas are evaluated in the library's yes-or-no mode,
	// where one that fails in its own keywords (here properties) runs no
	// vocabulary extension: an extension would count 1 step for all of
	// these 2^depth evaluations.
	{"properties and patternProperties naming the same $ref, under not", func(depth int) (string, string) {
		return `{"$defs": {"n": {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "patternProperties": {"^x$": {"$ref": "#/$defs/n"}}}}, "not": {"properties": {"x": {"$ref": "#/$defs/n"}}}}`, nested(depth)
	}},
	{"draft-07", func(depth int) (string, string) {
		return `{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"anyOf": [` + branch("definitions") + `, ` + branch("definitions") + `]}}, "properties": {"x": {"$ref": "#/definitions/n"}}}`, nested(depth)
	}},
	{"no recursion: levels of anyOf over a tiny input", func(depth int) (string, string) {
		return dag(depth, anyOfTwice, `{"type": "string"}`), `{"a": 1}`
	}},
	{"oneOf, which tries every branch, over an input that matches", func(depth int) (string, string) {
		return dag(depth, oneOfTwice, `{"type": "integer"}`), `{"a": 1}`
	}},
	{"a long string checked against a pattern at the bottom", func(depth int) (string, string) {
		return dag(depth, anyOfTwice, `{"type": "string", "pattern": "^a*$", "maxLength": 3}`), `{"a": "` + strings.Repeat("a", 1<<14) + `"}`
	}},
}

func TestCheckRefusesSchemasThatExplode(t *testing.T) {
	for _, tt := range pathological {
		t.Run(tt.name, func(t *testing.T) {
			schema, input := tt.make(40)
			s, err := inputschema.Compile(json.RawMessage(schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check(t.Context(), "deep_tool", json.RawMessage(input))
			var be *inputschema.BudgetError
			if !errors.As(err, &be) || !errors.Is(err, contract.ErrInvalidInput) {
				t.Fatalf("Check = %v, want a *BudgetError wrapping contract.ErrInvalidInput", err)
			}
			want := fmt.Sprintf("validating this input against deep_tool's schema takes more than %d steps; simplify the schema's recursion (anyOf/oneOf through $ref)",
				inputschema.BudgetFor([]byte(input)))
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			// The same input decoded by the runtime runs out as well.
			d, err := contract.DecodeInput(json.RawMessage(input))
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := inputschema.Compile(json.RawMessage(schema))
			err = fresh.CheckDecoded(t.Context(), "deep_tool", d)
			if !errors.As(err, &be) || be.Steps != inputschema.BudgetFor(d.Canonical()) {
				t.Errorf("CheckDecoded = %v, want a *BudgetError of the canonical input's budget", err)
			}
		})
	}
}

// TestEveryEvaluationIsAStep: the steps a check takes grow with depth as
// the schema's evaluations do, in every mode the library evaluates
// subschemas in, so each nested evaluation is counted.
func TestEveryEvaluationIsAStep(t *testing.T) {
	for _, tt := range pathological {
		t.Run(tt.name, func(t *testing.T) {
			var steps []int
			for depth := 2; depth <= 5; depth++ {
				schema, input := tt.make(depth)
				s, err := inputschema.Compile(json.RawMessage(schema))
				if err != nil {
					t.Fatal(err)
				}
				n, err := inputschema.StepsOf(s, json.RawMessage(input))
				if err != nil {
					t.Fatal(err)
				}
				steps = append(steps, n)
			}
			// Two branches per level: each level at least doubles the work.
			for i := 1; i < len(steps); i++ {
				if steps[i] < 2*steps[i-1] {
					t.Fatalf("steps by depth 2..5: %v; want each at least twice the one before", steps)
				}
			}
		})
	}
}

// ordinary are schemas a tool really has, with inputs far larger than a
// model sends: none comes near its budget.
var ordinary = []struct {
	name, schema, input string
}{
	{
		name:   "a flat schema",
		schema: `{"type": "object", "properties": {"job": {"type": "string"}, "params": {"type": "object"}}, "required": ["job"]}`,
		input:  `{"job": "deploy", "params": {"branch": "main", "dry_run": true}}`,
	},
	{
		name: "a recursive JSON value with anyOf of array and object branches",
		schema: `{"$defs": {"value": {"anyOf": [
			{"type": "array", "items": {"$ref": "#/$defs/value"}},
			{"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
			{"type": ["string", "number", "boolean", "null"]}
		]}}, "properties": {"doc": {"$ref": "#/$defs/value"}}}`,
		input: `{"doc": ` + jsonValue(6) + `}`,
	},
	{
		name:   "a oneOf of ten object forms over a hundred items",
		schema: `{"properties": {"items": {"type": "array", "items": {"oneOf": [` + forms(10) + `]}}}}`,
		input:  `{"items": [` + strings.TrimSuffix(strings.Repeat(`{"kind": "k7", "a": "x", "b": 2, "c": [1, 2, 3]},`, 100), ",") + `]}`,
	},
	{
		name:   "dense numbers",
		schema: `{"properties": {"n": {"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}}}}`,
		input:  `{"n": [` + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") + `]}`,
	},
	{
		name:   "a long string",
		schema: `{"properties": {"s": {"type": "string", "pattern": "^a*$"}}}`,
		input:  `{"s": "` + strings.Repeat("a", 1<<20) + `"}`,
	},
}

// jsonValue is a JSON value nesting arrays and objects depth deep, four
// wide.
func jsonValue(depth int) string {
	if depth == 0 {
		return `"leaf"`
	}
	child := jsonValue(depth - 1)
	return fmt.Sprintf(`{"a": [%s, 1, null], "b": %s, "c": true, "d": [%s]}`, child, child, child)
}

func forms(n int) string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"type": "object", "properties": {"kind": {"const": "k%d"}, "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "array", "items": {"type": "integer"}}}, "required": ["kind"]}`, i))
	}
	return strings.Join(out, ", ")
}

func TestOrdinarySchemasStayWellInsideTheBudget(t *testing.T) {
	for _, tt := range ordinary {
		t.Run(tt.name, func(t *testing.T) {
			s, err := inputschema.Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(t.Context(), "t", json.RawMessage(tt.input)); err != nil {
				t.Fatalf("Check = %v", err)
			}
			steps, _ := inputschema.StepsOf(s, json.RawMessage(tt.input))
			budget := inputschema.BudgetFor([]byte(tt.input))
			t.Logf("%d bytes: %d steps of %d (%.1f%%)", len(tt.input), steps, budget, 100*float64(steps)/float64(budget))
			if steps > budget/2 {
				t.Errorf("%d steps of a budget of %d: an ordinary schema must stay far inside it", steps, budget)
			}
		})
	}
}

func TestBudgetGrowsWithTheInputUpToItsCap(t *testing.T) {
	tests := []struct {
		bytes, want int
	}{
		{0, inputschema.MinSteps},
		{1000, inputschema.MinSteps + 1000*inputschema.StepsPerByte},
		{contract.MaxInputBytes, inputschema.MaxSteps},
	}
	for _, tt := range tests {
		if got := inputschema.BudgetFor(make([]byte, tt.bytes)); got != tt.want {
			t.Errorf("budget for %d bytes: %d, want %d", tt.bytes, got, tt.want)
		}
	}
}

// TestStepsCostWhatTheyHold: a long string costs a step per 16 bytes, and
// every evaluation of a deeply nested input costs more, for the longer
// locations the library keeps for each failure.
func TestStepsCostWhatTheyHold(t *testing.T) {
	s, err := inputschema.Compile(json.RawMessage(`{"properties": {"s": {"type": "string"}, "n": {"type": "array"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input string
		want  int
	}{
		{`{"s": "short"}`, 2},
		{`{"s": "` + strings.Repeat("a", 1600) + `"}`, 2 + 100},
		{`{"n": ` + strings.Repeat("[", 15) + strings.Repeat("]", 15) + `}`, 2 * 3},
	}
	for _, tt := range tests {
		got, err := inputschema.StepsOf(s, json.RawMessage(tt.input))
		if err != nil || got != tt.want {
			t.Errorf("%.40s: %d steps (%v), want %d", tt.input, got, err, tt.want)
		}
	}
}

// TestFormatsStillAssert: metering keeps each schema's own format check.
func TestFormatsStillAssert(t *testing.T) {
	s, err := inputschema.Compile(json.RawMessage(`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"e": {"format": "email"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context(), "t", json.RawMessage(`{"e": "a@example.com"}`)); err != nil {
		t.Errorf("a good address: %v", err)
	}
	var ie *inputschema.InputError
	if err := s.Check(t.Context(), "t", json.RawMessage(`{"e": "nope"}`)); !errors.As(err, &ie) ||
		!cmp.Equal(ie.Problems, []inputschema.Problem{{Field: "/e", Rule: "is not a valid email (format)"}}) {
		t.Errorf("a bad address: %v", err)
	}
}

// lateCancel is a context that is done from its second look on: the first
// is Check's own before it starts, the second the meter's.
type lateCancel struct {
	context.Context
	looks atomic.Int32
}

func (c *lateCancel) Err() error {
	if c.looks.Add(1) > 1 {
		return context.Canceled
	}
	return nil
}

func TestCheckStopsWhenTheContextIsDone(t *testing.T) {
	schema, input := pathological[0].make(40)
	s, err := inputschema.Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	ctx := &lateCancel{Context: context.Background()}
	err = s.Check(ctx, "deep_tool", json.RawMessage(input))
	if !errors.Is(err, context.Canceled) || errors.Is(err, contract.ErrInvalidInput) {
		t.Fatalf("Check = %v, want one wrapping context.Canceled and not ErrInvalidInput", err)
	}
	if got := ctx.looks.Load(); got != 2 {
		t.Errorf("the context was looked at %d times; want 2 (stopped at the meter's first look)", got)
	}
	if !strings.Contains(err.Error(), "deep_tool") {
		t.Errorf("%q does not name the tool", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Check(done, "deep_tool", json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a done context = %v", err)
	}
	// The schema still checks: the stopped check left nothing behind.
	if err := s.Check(t.Context(), "deep_tool", json.RawMessage(`{"x": {}}`)); err != nil {
		t.Errorf("after a stopped check: %v", err)
	}
}

// TestConcurrentChecks: each check has its own budget, whatever the others
// on the same schema do at the same time.
func TestConcurrentChecks(t *testing.T) {
	schema, _ := pathological[0].make(0)
	s, err := inputschema.Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []struct {
		input string
		want  string // "", "budget" or "input"
	}{
		{`{"x": {"x": {}}}`, ""},
		{nested(3), "input"},
		{nested(30), "budget"},
	}
	var wg sync.WaitGroup
	errs := make([]error, 3*len(inputs))
	for i := range errs {
		wg.Go(func() { errs[i] = s.Check(context.Background(), "t", json.RawMessage(inputs[i%len(inputs)].input)) })
	}
	wg.Wait()
	for i, err := range errs {
		var be *inputschema.BudgetError
		var ie *inputschema.InputError
		got := ""
		switch {
		case errors.As(err, &be):
			got = "budget"
		case errors.As(err, &ie):
			got = "input"
		case err != nil:
			got = err.Error()
		}
		if want := inputs[i%len(inputs)].want; got != want {
			t.Errorf("check %d of %s: %q, want %q", i, inputs[i%len(inputs)].input, got, want)
		}
	}
	if n := inputschema.Spares(s); n < 1 {
		t.Errorf("%d compiled copies kept", n)
	}
}
