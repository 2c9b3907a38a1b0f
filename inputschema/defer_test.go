package inputschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/basis-go/basis/inputschema"
	"github.com/google/go-cmp/cmp"
)

// TestDeferReportsWhatCompileReports: a deferred schema that does not
// compile gives, at its first use and at every use after, the very error
// Compile gives, and refuses every input with it; a good one checks
// inputs as a compiled one does.
func TestDeferReportsWhatCompileReports(t *testing.T) {
	tests := []struct {
		schema, input string
	}{
		{`[]`, `{}`},
		{`{"type": "array"}`, `{}`},
		{`{"type": "object", "properties": {"n": {"minimum": "SECRET"}}}`, `{"n": 1}`},
		{`{"$ref": "file:///etc/SECRET"}`, `{}`},
		{`{"$schema": "http://json-schema.org/draft-04/schema#"}`, `{}`},
		{`{"type": "object", "required": ["n"]}`, `{}`},
		{`{"type": "object", "required": ["n"]}`, `{"n": 1}`},
	}
	for _, tt := range tests {
		compiled, compileErr := inputschema.Compile(json.RawMessage(tt.schema))
		deferred := inputschema.Defer(json.RawMessage(tt.schema), nil)
		for range 2 {
			if got, want := fmt.Sprint(deferred.Err()), fmt.Sprint(compileErr); got != want {
				t.Errorf("%s: Err() = %s; Compile said %s", tt.schema, got, want)
			}
			got := deferred.Check(context.Background(), "t", json.RawMessage(tt.input))
			want := compileErr
			if compiled != nil {
				want = compiled.Check(context.Background(), "t", json.RawMessage(tt.input))
			}
			if diff := cmp.Diff(fmt.Sprint(want), fmt.Sprint(got)); diff != "" {
				t.Errorf("%s, input %s: Check differs from the compiled schema's (-want +got):\n%s", tt.schema, tt.input, diff)
			}
			if compileErr != nil {
				var ce *inputschema.CompileError
				if !errors.As(got, &ce) {
					t.Errorf("%s: Check returned %T, want a *CompileError", tt.schema, got)
				}
			}
		}
	}
}

// TestDeferCompilesOnceOnFirstUse: nothing is compiled until the schema
// is used; the copy Err compiles is the one the first check takes.
func TestDeferCompilesOnceOnFirstUse(t *testing.T) {
	tests := []struct {
		name      string
		make      func() *inputschema.Schema
		askErr    bool
		afterErr  int // compiled copies kept after Err
		afterUses int // after Err (when asked) and two checks
	}{
		{"deferred, checked", func() *inputschema.Schema { return inputschema.Defer(json.RawMessage(`{"type": "object"}`), nil) }, false, 0, 1},
		// A host asking whether a schema compiles keeps no copy (a
		// manifest of 1,000 tools holds none); the first check compiles
		// the copy it uses and keeps it.
		{"deferred, asked, checked", func() *inputschema.Schema { return inputschema.Defer(json.RawMessage(`{"type": "object"}`), nil) }, true, 0, 1},
		{"compiled", func() *inputschema.Schema {
			s, err := inputschema.Compile(json.RawMessage(`{"type": "object"}`))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, true, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.make()
			if tt.askErr {
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				if n := inputschema.Spares(s); n != tt.afterErr {
					t.Fatalf("after Err %d compiled copies; want %d", n, tt.afterErr)
				}
			} else if n := inputschema.Spares(s); n != 0 {
				t.Fatalf("Defer compiled %d copies; want none before the first use", n)
			}
			for _, in := range []string{`{}`, `{"a":1}`} {
				if err := s.Check(context.Background(), "t", json.RawMessage(in)); err != nil {
					t.Fatal(err)
				}
			}
			if n := inputschema.Spares(s); n != tt.afterUses {
				t.Fatalf("after two checks %d compiled copies; want %d", n, tt.afterUses)
			}
		})
	}
}

// TestDeferInvalid: Invalid words the error of a schema that does not
// compile, and is not asked about a good one.
func TestDeferInvalid(t *testing.T) {
	errWhere := errors.New("tools.json:3:5")
	var asked int
	opts := &inputschema.DeferOptions{Invalid: func(ce *inputschema.CompileError) error {
		asked++
		return fmt.Errorf("%w: %w", errWhere, ce)
	}}
	bad := inputschema.Defer(json.RawMessage(`{"type": "array"}`), opts)
	for range 2 {
		err := bad.Check(context.Background(), "t", json.RawMessage(`{}`))
		var ce *inputschema.CompileError
		if !errors.Is(err, errWhere) || !errors.As(err, &ce) {
			t.Errorf("Check = %v; want Invalid's error wrapping the *CompileError", err)
		}
	}
	good := inputschema.Defer(json.RawMessage(`{"type": "object"}`), opts)
	if err := good.Err(); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("Invalid asked %d times; want once, for the bad schema", asked)
	}
}

// TestCheckRemembersWhatPassed: the input that passed last passes again
// without a walk of the schema (the runtime, the preview and the run each
// check a call's input); any other input is checked, and what fails still
// fails after a pass.
func TestCheckRemembersWhatPassed(t *testing.T) {
	s, err := inputschema.Compile(json.RawMessage(`{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		input string
		ok    bool
		walks int64 // after the check
	}{
		{`{"n":1}`, true, 1},
		{`{"n":1}`, true, 1},
		{`{"n":"1"}`, false, 2},
		{`{"n":1} `, true, 3},
		{`{"n":1}`, true, 4},
		{`{}`, false, 5},
		{`{}`, false, 6},
		{`{"n":1}`, true, 6},
		{`{"n":1}`, true, 6},
	}
	for i, st := range steps {
		err := s.Check(context.Background(), "t", json.RawMessage(st.input))
		if (err == nil) != st.ok || inputschema.Walks(s) != st.walks {
			t.Errorf("step %d, %s: %v after %d walks; want ok=%v after %d", i, st.input, err, inputschema.Walks(s), st.ok, st.walks)
		}
	}
}
