package inputschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/basis-go/basis/contract"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaURL is where a tool's input schema lives inside its own compiler.
// Each tool gets a compiler of its own, so no schema can reach another's
// through a $ref or clash with another's $id.
const schemaURL = "urn:basis:input_schema"

// maxProblems bounds how many problems one refusal lists.
const maxProblems = 20

// Schema is a compiled tool input schema. It is the one way basis judges
// a call's input — declared tools at load and in their preview, the
// runtime for tools of every other binding — so an input is refused with
// the same words whatever provides the tool: the field's JSON pointer and
// the rule it breaks, never a value from the input or from the schema.
//
// A Schema is safe for concurrent use. Checking one input is bounded work
// (see [Schema.Check]), however the schema recurses.
type Schema struct {
	raw json.RawMessage
	// spare holds compiled copies that are not checking an input. Each
	// copy carries the meter of the one check it is doing (the library
	// gives a check no state of its own), so concurrent checks take a
	// copy each, compiling another when none is free.
	spare chan *checker
	// once compiles the first copy, whose problems are err: a schema is
	// compiled when first used, once, and a bad one is refused for good.
	once    sync.Once
	err     error
	invalid func(*CompileError) error
	// passed is the last input that matched, byte for byte: a call's
	// input is checked by the runtime, its preview and its run, and a
	// schema is a pure function of the input, so the same bytes pass
	// again without a walk of the schema.
	passed atomic.Pointer[[]byte]
	// walks counts the checks that walked the schema, for the tests.
	walks atomic.Int64
}

// maxRemembered bounds the input a Schema remembers as passed.
const maxRemembered = 64 << 10

// DeferOptions says how a deferred schema reports that it does not
// compile. A nil *DeferOptions means every default.
type DeferOptions struct {
	// Invalid turns the schema's *[CompileError] into the error
	// [Schema.Err] and [Schema.Check] return (a host says where the schema
	// is written, such as a manifest's line and column). Nil returns the
	// *CompileError itself.
	Invalid func(*CompileError) error
}

// Compile compiles raw under the rules every tool's input schema follows:
// a JSON object whose "type" is "object" or absent, JSON Schema draft
// 2020-12 (or draft-07 when "$schema" says so), and self-contained — a
// $ref outside the schema is refused, nothing is read from disk or the
// network. The error is a *[CompileError] listing every problem, each
// naming where in the schema it is and wrapping [ErrNotObject] or
// an unexported error for any other problem; it quotes nothing from the schema.
func Compile(raw json.RawMessage) (*Schema, error) {
	s := Defer(raw, nil)
	// The copy is kept: a compiled schema is compiled to check inputs.
	if err := s.compile(true); err != nil {
		return nil, err
	}
	return s, nil
}

// Defer returns the schema raw without compiling it: it is compiled, under
// the rules of [Compile], at its first use ([Schema.Check] or
// [Schema.Err]), once (and once more for the first check after Err). A host that loads many schemas for a call that
// uses one pays for that one. A schema that does not compile refuses
// every input with the error [Schema.Err] returns; no input is ever
// checked against less than the whole schema.
func Defer(raw json.RawMessage, opts *DeferOptions) *Schema {
	s := &Schema{raw: bytes.Clone(raw), spare: make(chan *checker, runtime.GOMAXPROCS(0))}
	if opts != nil {
		s.invalid = opts.Invalid
	}
	return s
}

// Err compiles the schema, if it has not been, and returns nil or why it
// cannot be used: the *[CompileError] [Compile] returns, or what
// [DeferOptions.Invalid] made of it. It keeps no compiled copy: a host
// that asks of many schemas (every tool of a manifest) whether they
// compile does not hold them all, which made the garbage collector's work
// a large share of loading them; the first [Schema.Check] compiles the
// copy it uses.
func (s *Schema) Err() error { return s.compile(false) }

// compile compiles the schema once; keep keeps the compiled copy, for a
// check about to run.
func (s *Schema) compile(keep bool) error {
	s.once.Do(func() {
		c, err := newChecker(s.raw)
		if err != nil {
			ce, _ := err.(*CompileError)
			if ce != nil && s.invalid != nil {
				err = s.invalid(ce)
			}
			s.err = err
			return
		}
		if keep {
			s.put(c)
		}
	})
	return s.err
}

// Check checks one call's input against the schema: one JSON object that
// matches it. An absent (empty or blank) input is the empty object. The
// error is an *[InputError] naming tool, or, for a schema that does not
// compile, what [Schema.Err] returns.
//
// Checking is bounded: every evaluation of a subschema is a step (more
// for a long string or a deeply nested input), and one input may take
// [MinSteps] plus [StepsPerByte] steps for each byte of input, at most
// [MaxSteps]. A schema whose alternatives recurse through $ref can need
// exponentially many steps for a small input; past the budget the input
// is refused with a *[BudgetError]. When ctx is done first, checking
// stops and the error wraps ctx.Err().
func (s *Schema) Check(ctx context.Context, tool string, input json.RawMessage) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	return s.check(ctx, tool, input, nil)
}

// CheckDecoded is [Schema.Check] of an input [contract.DecodeInput] has
// already read: the decoded object is checked as it is, without decoding
// the canonical bytes again, and the same bytes pass again later ([Schema.Check]
// of them included) without a walk of the schema.
func (s *Schema) CheckDecoded(ctx context.Context, tool string, input *contract.DecodedInput) error {
	return s.check(ctx, tool, input.Canonical(), input)
}

// check checks input, or decoded (input's decoded form) when not nil.
func (s *Schema) check(ctx context.Context, tool string, input json.RawMessage, decoded *contract.DecodedInput) error {
	if err := ctx.Err(); err != nil {
		return stoppedError(tool, err)
	}
	if err := s.compile(true); err != nil {
		return err
	}
	if p := s.passed.Load(); p != nil && bytes.Equal(*p, input) {
		return nil
	}
	c, err := s.take()
	if err != nil {
		return &InputError{Tool: tool, Problems: []Problem{{Rule: "could not be checked against the schema"}}}
	}
	defer s.put(c)
	s.walks.Add(1)
	var problems []Problem
	if decoded != nil {
		problems, err = c.checkValue(ctx, decoded.Value(), budgetFor(input))
	} else {
		problems, err = c.check(ctx, input, budgetFor(input))
	}
	switch {
	case errors.Is(err, errBudget):
		return &BudgetError{Tool: tool, Steps: budgetFor(input)}
	case err != nil:
		return stoppedError(tool, err)
	case problems != nil:
		return &InputError{Tool: tool, Problems: problems}
	}
	if len(input) <= maxRemembered {
		remembered := bytes.Clone(input)
		s.passed.Store(&remembered)
	}
	return nil
}

func stoppedError(tool string, err error) error {
	return fmt.Errorf("checking the input for %s against its schema stopped: %w", tool, err)
}

// take returns a compiled copy that no other check is using.
func (s *Schema) take() (*checker, error) {
	select {
	case c := <-s.spare:
		return c, nil
	default:
		return newChecker(s.raw)
	}
}

// put keeps c for the next check, unless enough copies are kept already.
func (s *Schema) put(c *checker) {
	select {
	case s.spare <- c:
	default:
	}
}

// compileSchema checks that raw is an object schema for an object and
// compiles it. References are resolved inside the schema only: nothing is
// fetched from the network or read from disk.
func compileSchema(raw json.RawMessage, prepare func(*jsonschema.Compiler)) (*jsonschema.Schema, []SchemaProblem) {
	fail := func(kind error, text string) []SchemaProblem {
		return []SchemaProblem{{Err: newProblem(kind, text)}}
	}
	if kind := jsonKind(bytes.TrimSpace(raw)); kind != "an object" {
		return nil, fail(ErrNotObject, "must be a JSON object (a JSON Schema whose type is \"object\"), not "+kind)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fail(errInvalid, "is not valid JSON")
	}
	obj, _ := doc.(map[string]any)
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, fail(errInvalid, `"type" must be "object" or left out: the program reads one JSON object`)
	}
	if s, ok := obj["$schema"]; ok {
		text, _ := s.(string)
		if !acceptedDraft(text) {
			return nil, fail(errInvalid, `"$schema" must name JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12/schema) or draft-07 (http://json-schema.org/draft-07/schema#), or be left out for 2020-12`)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if prepare != nil {
		prepare(c)
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fail(errInvalid, "cannot be used as a schema")
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, describeCompileError(err)
	}
	return sch, nil
}

// acceptedDraft reports whether a $schema names draft 2020-12 or
// draft-07, the two drafts the format accepts.
func acceptedDraft(url string) bool {
	url = strings.TrimSuffix(url, "#")
	url = strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://")
	return url == "json-schema.org/draft/2020-12/schema" || url == "json-schema.org/draft-07/schema"
}

// refuseLoader loads nothing: an input_schema must be self-contained.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) {
	return nil, errors.New("external references are not loaded")
}

// describeCompileError turns the compiler's error into problems that name
// where in the schema it went wrong and which rule, never the library's
// own text, which quotes the schema's values.
func describeCompileError(err error) []SchemaProblem {
	one := func(text string) []SchemaProblem {
		return []SchemaProblem{{Err: newProblem(errInvalid, text)}}
	}
	var (
		invalid     *jsonschema.SchemaValidationError
		load        *jsonschema.LoadURLError
		notFound    *jsonschema.JSONPointerNotFoundError
		badPointer  *jsonschema.InvalidJsonPointerError
		noAnchor    *jsonschema.AnchorNotFoundError
		dupID       *jsonschema.DuplicateIDError
		dupAnchor   *jsonschema.DuplicateAnchorError
		vocabulary  *jsonschema.UnsupportedVocabularyError
		badRegex    *jsonschema.InvalidRegexError
		parseURL    *jsonschema.ParseURLError
		parseID     *jsonschema.ParseIDError
		parseAnchor *jsonschema.ParseAnchorError
	)
	switch {
	case errors.As(err, &invalid):
		var ve *jsonschema.ValidationError
		if !errors.As(invalid.Err, &ve) {
			return one("is not a valid JSON Schema")
		}
		var out []SchemaProblem
		for _, p := range describeValidation(ve, "metaschema") {
			out = append(out, SchemaProblem{Pointer: p.Field, Err: newProblem(errInvalid, "not valid JSON Schema: "+p.Rule)})
		}
		return out
	case errors.As(err, &load):
		return one("a $ref or $schema points outside the schema; input_schema must be self-contained (use $defs and \"#/$defs/...\" references)")
	case errors.As(err, &notFound), errors.As(err, &badPointer), errors.As(err, &noAnchor):
		return one("a $ref points to nothing inside the schema")
	case errors.As(err, &dupID), errors.As(err, &dupAnchor):
		return one("the schema declares the same $id or anchor twice")
	case errors.As(err, &vocabulary):
		return one("the schema requires a vocabulary that is not supported")
	case errors.As(err, &badRegex):
		return one("a pattern is not a valid regular expression")
	case errors.As(err, &parseURL), errors.As(err, &parseID), errors.As(err, &parseAnchor):
		return one("an $id, $ref or anchor is not a valid URI reference")
	}
	return one("does not compile as a JSON Schema")
}

// validateInput checks a call's input: one JSON object that matches the
// schema. It returns nil when the input is good. m, when not nil, is the
// meter of sch, told how deep the input nests before the check starts.
func validateInput(sch *jsonschema.Schema, input []byte, m *meter) []Problem {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return []Problem{{Rule: "not valid JSON (at byte " + strconv.FormatInt(syn.Offset, 10) + ")"}}
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return []Problem{{Rule: "not valid JSON (it ends before the object is complete)"}}
		}
		return []Problem{{Rule: "not valid JSON (there is more after the object)"}}
	}
	return validateValue(sch, v, m)
}

// validateValue checks a call's decoded input, as validateInput does.
func validateValue(sch *jsonschema.Schema, v any, m *meter) []Problem {
	if _, ok := v.(map[string]any); !ok {
		return []Problem{{Rule: "expected object, but got " + schemaTypeOf(v)}}
	}
	if m != nil {
		m.setDepth(depthOf(v))
	}
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Rule: "could not be checked against the schema"}}
	}
	return describeValidation(ve, "schema")
}

func schemaTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// describeValidation lists the fields a validation error is about and the
// rule each breaks, from the error's structure (ErrorKind and
// InstanceLocation), never from its text, which quotes values.
func describeValidation(ve *jsonschema.ValidationError, schema string) []Problem {
	var out []Problem
	collectProblems(ve, schema, &out)
	slices.SortFunc(out, func(a, b Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	out = slices.Compact(out)
	if len(out) == 0 {
		out = []Problem{{Rule: "does not match the schema"}}
	}
	if len(out) > maxProblems {
		more := len(out) - maxProblems
		out = append(out[:maxProblems], Problem{Rule: strconv.Itoa(more) + " more problems not shown"})
	}
	return out
}

// collectProblems walks the error tree; schema names what was validated
// against ("schema", or "metaschema" when checking a schema itself).
func collectProblems(ve *jsonschema.ValidationError, schema string, out *[]Problem) {
	at := pointer(ve.InstanceLocation)
	add := func(field, rule string) { *out = append(*out, Problem{Field: field, Rule: rule}) }
	switch k := ve.ErrorKind.(type) {
	// Alternatives: the reasons each branch failed would read as a list of
	// contradictions, so the field and the keyword are the message.
	case *kind.AnyOf:
		add(at, "matches none of the forms the "+schema+" allows (anyOf)")
		return
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			add(at, "matches more than one of the forms the "+schema+" allows, where exactly one must match (oneOf)")
		} else {
			add(at, "matches none of the forms the "+schema+" allows (oneOf)")
		}
		return
	case *kind.Not:
		add(at, "matches a form the "+schema+" forbids (not)")
		return
	case *kind.PropertyNames:
		add(at+"/"+escapeToken(k.Property), "is not an allowed property name (propertyNames)")
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, schema, out)
		}
		return
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			add(at+"/"+escapeToken(name), "required, but missing")
		}
	case *kind.DependentRequired:
		for _, name := range k.Missing {
			add(at+"/"+escapeToken(name), "required when "+at+"/"+escapeToken(k.Prop)+" is present, but missing (dependentRequired)")
		}
	case *kind.Dependency:
		for _, name := range k.Missing {
			add(at+"/"+escapeToken(name), "required when "+at+"/"+escapeToken(k.Prop)+" is present, but missing (dependencies)")
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			add(at+"/"+escapeToken(name), "not allowed: the schema names no such property (additionalProperties)")
		}
	default:
		add(at, leafRule(ve.ErrorKind))
	}
}

// leafRule says which rule a value breaks. It uses the schema's keyword
// and, for numeric limits, the limit; it never shows the value, nor
// strings from the schema (enum and const members, patterns).
func leafRule(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "expected " + strings.Join(k.Want, " or ") + ", but got " + k.Got
	case *kind.Enum:
		return "is not one of the values the schema allows (enum)"
	case *kind.Const:
		return "is not the value the schema requires (const)"
	case *kind.Format:
		return "is not a valid " + word(k.Want, "value") + " (format)"
	case *kind.Pattern:
		return "does not match the schema's pattern (pattern)"
	case *kind.MinLength:
		return "must be at least " + strconv.Itoa(k.Want) + " characters long (minLength)"
	case *kind.MaxLength:
		return "must be at most " + strconv.Itoa(k.Want) + " characters long (maxLength)"
	case *kind.MinItems:
		return "must have at least " + strconv.Itoa(k.Want) + " items (minItems)"
	case *kind.MaxItems:
		return "must have at most " + strconv.Itoa(k.Want) + " items (maxItems)"
	case *kind.MinProperties:
		return "must have at least " + strconv.Itoa(k.Want) + " properties (minProperties)"
	case *kind.MaxProperties:
		return "must have at most " + strconv.Itoa(k.Want) + " properties (maxProperties)"
	case *kind.Minimum:
		return "must be at least " + ratText(k.Want) + " (minimum)"
	case *kind.Maximum:
		return "must be at most " + ratText(k.Want) + " (maximum)"
	case *kind.ExclusiveMinimum:
		return "must be greater than " + ratText(k.Want) + " (exclusiveMinimum)"
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratText(k.Want) + " (exclusiveMaximum)"
	case *kind.MultipleOf:
		return "must be a multiple of " + ratText(k.Want) + " (multipleOf)"
	case *kind.UniqueItems:
		return "items " + strconv.Itoa(k.Duplicates[0]) + " and " + strconv.Itoa(k.Duplicates[1]) + " are equal, but items must be unique (uniqueItems)"
	case *kind.Contains:
		return "has no item that matches the schema's contains (contains)"
	case *kind.MinContains:
		return "must have at least " + strconv.Itoa(k.Want) + " items that match the schema's contains (minContains)"
	case *kind.MaxContains:
		return "must have at most " + strconv.Itoa(k.Want) + " items that match the schema's contains (maxContains)"
	case *kind.AdditionalItems:
		return "has " + strconv.Itoa(k.Count) + " more items than the schema allows (additionalItems)"
	case *kind.FalseSchema:
		return "is not allowed here (the schema is false)"
	case *kind.ContentEncoding:
		return "is not " + word(k.Want, "correctly") + " encoded (contentEncoding)"
	case *kind.ContentMediaType:
		return "is not valid " + word(k.Want, "content") + " (contentMediaType)"
	}
	if path := k.KeywordPath(); len(path) > 0 {
		return "does not match the schema (" + word(path[0], "schema") + ")"
	}
	return "does not match the schema"
}

// word returns s when it is a plain word (a format or keyword name) and
// fallback otherwise, so nothing unexpected from a schema reaches a
// message.
func word(s, fallback string) string {
	if s == "" || len(s) > 40 {
		return fallback
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '/' || c == '.' || c == '+') {
			return fallback
		}
	}
	return s
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "the schema's limit"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// pointer builds a JSON pointer from path tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// escapeToken escapes a JSON pointer token (~ and /) and any control
// character, so a field path always fits on one line.
func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") && !hasControl(t) {
		return t
	}
	var b strings.Builder
	for _, r := range t {
		switch {
		case r == '~':
			b.WriteString("~0")
		case r == '/':
			b.WriteString("~1")
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || 0x80 <= r && r < 0xa0:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || 0x80 <= r && r < 0xa0 {
			return true
		}
	}
	return false
}

// jsonKind names the kind of the JSON value raw starts, as a message puts
// it after "not": "an object", "an array", "a string", "a number", "a
// boolean", "null", or "nothing" when raw is empty.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
