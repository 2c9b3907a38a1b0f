package declared_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

func TestCompileInputSchema(t *testing.T) {
	tests := []struct {
		schema string
		is     error
		says   string
	}{
		{`[]`, declared.ErrWrongType, "must be a JSON object"},
		{`{"type": "array"}`, declared.ErrInvalidSchema, `"type" must be "object"`},
		{`{"type": "object", "properties": {"n": {"minimum": "SECRET"}}}`, declared.ErrInvalidSchema, "/properties/n/minimum"},
		{`{"$ref": "file:///etc/SECRET"}`, declared.ErrInvalidSchema, "self-contained"},
		{`{"$schema": "http://json-schema.org/draft-04/schema#"}`, declared.ErrInvalidSchema, "draft 2020-12"},
	}
	for _, tt := range tests {
		s, err := declared.CompileInputSchema(json.RawMessage(tt.schema))
		if s != nil || !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, %v; want %v saying %q", tt.schema, s, err, tt.is, tt.says)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q quotes the schema or spans lines", tt.schema, err)
		}
	}
}

func TestInputSchemaCheck(t *testing.T) {
	s, err := declared.CompileInputSchema(json.RawMessage(`{"properties": {"job": {"type": "string"}}, "required": ["job"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check("job_tool", json.RawMessage(`{"job": "x"}`)); err != nil {
		t.Errorf("a matching input: %v", err)
	}
	err = s.Check("job_tool", json.RawMessage(`{"job": 7}`))
	var ie *declared.InputError
	if !errors.As(err, &ie) || !errors.Is(err, declared.ErrInvalidInput) {
		t.Fatalf("Check = %v, want an *InputError", err)
	}
	want := []declared.InputProblem{{Field: "/job", Rule: "expected string, but got number"}}
	if diff := cmp.Diff(want, ie.Problems); diff != "" || ie.Tool != "job_tool" {
		t.Errorf("tool %q, problems (-want +got):\n%s", ie.Tool, diff)
	}
	if err := s.Check("job_tool", nil); !errors.As(err, &ie) || ie.Problems[0].Field != "/job" {
		t.Errorf("an absent input is checked as {}: %v", err)
	}
}
