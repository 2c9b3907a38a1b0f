package inputschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// FuzzCompileCheck compiles arbitrary schemas and checks arbitrary inputs
// against those that compile: neither may panic, every compile error wraps
// a sentinel, and every input refusal (a budget run out among them) is one
// line wrapping contract.ErrInvalidInput.
func FuzzCompileCheck(f *testing.F) {
	f.Add(`{"type":"object","properties":{"job":{"type":"string"}},"required":["job"]}`, `{"job":7}`)
	f.Add(`{"$defs":{"a":{"minimum":3}},"properties":{"n":{"$ref":"#/$defs/a"}}}`, `{"n":1}`)
	f.Add(`{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false}`, `{"x":null}`)
	f.Add(`[]`, `[]`)
	f.Add(`{"oneOf":[{},{}]}`, `{}}`)
	f.Add(`{"$defs":{"n":{"anyOf":[{"properties":{"x":{"$ref":"#/$defs/n"}}},{"properties":{"x":{"$ref":"#/$defs/n"}}}]}},"properties":{"x":{"$ref":"#/$defs/n"}}}`,
		`{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":1}}}}}}}}}}}}}}}}}}}}`)
	f.Fuzz(func(t *testing.T, schema, input string) {
		s, err := inputschema.Compile(json.RawMessage(schema))
		if err != nil {
			var ce *inputschema.CompileError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("compile error is not a *CompileError with problems: %v", err)
			}
			return
		}
		if err := s.Check(context.Background(), "t", json.RawMessage(input)); err != nil {
			if !errors.Is(err, contract.ErrInvalidInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("check error %q: want one line wrapping ErrInvalidInput", err)
			}
		}
		// An input the runtime has decoded is judged as its canonical
		// bytes are, each by a schema that remembers nothing yet.
		d, err := contract.DecodeInput(json.RawMessage(input))
		if err != nil {
			return
		}
		fromBytes, _ := inputschema.Compile(json.RawMessage(schema))
		fromValue, _ := inputschema.Compile(json.RawMessage(schema))
		want := fromBytes.Check(context.Background(), "t", d.Canonical())
		got := fromValue.CheckDecoded(context.Background(), "t", d)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("CheckDecoded = %v; Check of the canonical bytes = %v", got, want)
		}
	})
}
