package inputschema

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The budget of one check, in steps. A step is one evaluation of one
// subschema against one value of the input; an ordinary schema takes a
// few steps for each value of the input, while anyOf or oneOf branches
// that recurse through the same $ref take exponentially many. The library
// keeps every failed evaluation, with the value's location, until the
// check ends, so a step costs memory as well as time: the cap bounds both.
// See ADR 0012.
const (
	// MinSteps is the budget of every check, however small its input:
	// enough for any schema that evaluates each value a bounded number of
	// times, and a fraction of a second of work.
	MinSteps = 100_000
	// StepsPerByte is the budget added for each byte of input, so that a
	// large input against an ordinary schema is not refused for its size.
	StepsPerByte = 2
	// MaxSteps caps the budget, whatever the input's size: about a
	// quarter of a gigabyte and a few seconds at worst.
	MaxSteps = 1_000_000
	// stringBytesPerStep: a string value costs one more step for each
	// this many bytes, so checking a long string (pattern, format,
	// length) again and again is paid for too.
	stringBytesPerStep = 16
	// depthPerStep: every evaluation costs one more step for each this
	// many levels the input nests, for the longer locations the library
	// records.
	depthPerStep = 8
	// ctxEvery is how many steps pass between two looks at the context.
	ctxEvery = 1024
)

// budgetFor is the number of steps a check of input may take.
func budgetFor(input []byte) int {
	return min(MaxSteps, MinSteps+StepsPerByte*len(input))
}

// depthOf is how deeply v nests objects and arrays: 1 for an object of
// scalars.
func depthOf(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
	default:
		return 0
	}
	return d + 1
}

// errBudget ends a check that ran out of steps.
var errBudget = errors.New("budget exhausted")

// abort is what a meter panics with to end a check from inside the
// library, which offers no other way to stop a validation; check
// recovers it and nothing else.
type abort struct{ err error }

// meter counts the steps of the check a compiled copy is doing.
type meter struct {
	ctx  context.Context
	base int // what any evaluation costs, by the input's depth
	left int // steps left
	tick int // steps until the next look at ctx
	used int // steps taken, for tests
}

func (m *meter) setDepth(depth int) { m.base = 1 + depth/depthPerStep }

func (m *meter) step(v any) {
	cost := m.base
	if s, ok := v.(string); ok {
		cost += len(s) / stringBytesPerStep
	}
	m.used += cost
	m.left -= cost
	if m.left < 0 {
		panic(abort{errBudget})
	}
	m.tick -= cost
	if m.tick <= 0 {
		m.tick = ctxEvery
		if err := m.ctx.Err(); err != nil {
			panic(abort{err})
		}
	}
}

// checker is one compiled copy of a schema with the meter its steps go
// to. It does one check at a time.
type checker struct {
	schema *jsonschema.Schema
	meter  *meter
}

// meteredVocabulary is registered only to learn every schema object the
// compiler builds: its Compile is called once for each, and Enqueue of
// the empty path returns the object being compiled. It adds no keyword.
const meteredVocabulary = "urn:basis:inputschema:metered"

// newChecker compiles raw (already known to compile) so that every
// evaluation of every schema object takes a step from the copy's meter.
//
// The step is taken in the object's format check, the one hook the
// library runs on every evaluation before it descends into subschemas,
// whatever the outcome and in every mode; a vocabulary's extension would
// run only after them, and not at all for a failed subschema under not,
// if or a decided oneOf, so an exponential search of failing branches
// would go uncounted. Every object keeps its own format check, wrapped.
func newChecker(raw json.RawMessage) (*checker, error) {
	m := &meter{ctx: context.Background()}
	var objects []*jsonschema.Schema
	collect := func(c *jsonschema.Compiler) {
		c.RegisterVocabulary(&jsonschema.Vocabulary{
			URL: meteredVocabulary,
			Compile: func(ctx *jsonschema.CompilerContext, _ map[string]any) (jsonschema.SchemaExt, error) {
				objects = append(objects, ctx.Enqueue(nil))
				return nil, nil
			},
		})
		// Custom vocabularies run for draft 2020-12 only when asserted.
		c.AssertVocabs()
	}
	sch, problems := compileSchema(raw, collect)
	if len(problems) > 0 {
		return nil, &CompileError{Problems: problems}
	}
	seen := make(map[*jsonschema.Schema]bool, len(objects))
	for _, o := range objects {
		if !seen[o] {
			seen[o] = true
			o.Format = meteredFormat(o.Format, m)
		}
	}
	return &checker{schema: sch, meter: m}, nil
}

// meteredFormat returns a format check that takes a step from m and then
// does what f does (nothing when f is nil).
func meteredFormat(f *jsonschema.Format, m *meter) *jsonschema.Format {
	if f == nil {
		return &jsonschema.Format{Validate: func(v any) error {
			m.step(v)
			return nil
		}}
	}
	return &jsonschema.Format{Name: f.Name, Validate: func(v any) error {
		m.step(v)
		return f.Validate(v)
	}}
}

// check validates input with at most budget steps. It returns the
// problems found (nil when the input is good), or errBudget, or the
// context's error.
func (c *checker) check(ctx context.Context, input []byte, budget int) (problems []Problem, err error) {
	return c.metered(ctx, budget, func() []Problem { return validateInput(c.schema, input, c.meter) })
}

// checkValue is check of an input already decoded.
func (c *checker) checkValue(ctx context.Context, v any, budget int) (problems []Problem, err error) {
	return c.metered(ctx, budget, func() []Problem { return validateValue(c.schema, v, c.meter) })
}

// metered runs validate with the meter set to budget steps.
func (c *checker) metered(ctx context.Context, budget int, validate func() []Problem) (problems []Problem, err error) {
	*c.meter = meter{ctx: ctx, base: 1, left: budget, tick: ctxEvery}
	defer func() {
		c.meter.ctx = context.Background() // hold no caller's context
		if v := recover(); v != nil {
			a, ok := v.(abort)
			if !ok {
				panic(v)
			}
			problems, err = nil, a.err
		}
	}()
	return validate(), nil
}
