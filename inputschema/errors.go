package inputschema

import (
	"errors"
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
)

// Every [SchemaProblem] wraps one of these.
var (
	// ErrNotObject: the schema is not a JSON object. A manifest reader
	// branches on it to point at the "inputSchema" value itself rather
	// than at a place inside it.
	ErrNotObject = errors.New("input schema is not a JSON object")
	// errInvalid: the schema is an object but cannot be used: its "type"
	// is not "object", it names an unsupported draft, it refers outside
	// itself, or it does not compile. No caller branches on it: the
	// problem's pointer and message say what to fix.
	errInvalid = errors.New("invalid input schema")
)

// CompileError is every problem [Compile] found in one schema.
type CompileError struct {
	Problems []SchemaProblem
}

// SchemaProblem is one reason a schema is unusable.
type SchemaProblem struct {
	// Pointer is the JSON pointer inside the schema ("" for the schema as
	// a whole).
	Pointer string
	// Err says what is wrong, quoting nothing from the schema; it wraps
	// [ErrNotObject] or an unexported error for any other problem.
	Err error
}

// Error returns every problem on one line, separated by "; ".
func (e *CompileError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Err.Error()
		if p.Pointer != "" {
			parts[i] = p.Pointer + ": " + parts[i]
		}
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns each problem's error.
func (e *CompileError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p.Err
	}
	return errs
}

// problem is a message that reads naturally with a sentinel for errors.Is.
type problem struct {
	kind error
	text string
}

func (p *problem) Error() string { return p.text }
func (p *problem) Unwrap() error { return p.kind }

func newProblem(kind error, text string) error { return &problem{kind: kind, text: text} }

// InputError refuses a call whose input is not a JSON object or does not
// match the tool's schema. Nothing was started. Its message names the
// fields and the rules they break, never a value from the input, which
// may carry a secret too.
type InputError struct {
	// Tool is the tool's name.
	Tool string
	// Problems lists what is wrong, one entry per field, in a stable
	// order.
	Problems []Problem
}

// Problem is one field of a call's input that breaks the schema.
type Problem struct {
	// Field is the JSON pointer of the field ("/job", "/items/2"), or ""
	// for the input as a whole.
	Field string
	// Rule says which rule it breaks, such as "expected string, but got
	// number" or "required, but missing".
	Rule string
}

// String returns "/job: expected string, but got number"; the input as a
// whole is called "input".
func (p Problem) String() string {
	field := p.Field
	if field == "" {
		field = "input"
	}
	return field + ": " + p.Rule
}

// Error returns one line such as "the input for jenkins_job does not match
// its schema: /job: expected string, but got number".
func (e *InputError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "the input for " + e.Tool + " does not match its schema: " + strings.Join(parts, "; ")
}

// Unwrap returns [contract.ErrInvalidInput].
func (e *InputError) Unwrap() error { return contract.ErrInvalidInput }

// BudgetError refuses an input whose check against the tool's schema
// would take more steps than the input's budget (see [Schema.Check]):
// the schema's alternatives recurse so that the work grows exponentially
// with the input. Nothing was started. What to fix is the schema, which
// the message says; it quotes nothing.
type BudgetError struct {
	// Tool is the tool's name.
	Tool string
	// Steps is the budget the check ran out of.
	Steps int
}

// Error returns one line naming the tool, the budget and what to simplify.
func (e *BudgetError) Error() string {
	return "validating this input against " + e.Tool + "'s schema takes more than " + strconv.Itoa(e.Steps) +
		" steps; simplify the schema's recursion (anyOf/oneOf through $ref)"
}

// Unwrap returns [contract.ErrInvalidInput]: the input is refused before
// anything runs.
func (e *BudgetError) Unwrap() error { return contract.ErrInvalidInput }
