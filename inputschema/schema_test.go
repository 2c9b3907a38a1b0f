package inputschema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
	"github.com/google/go-cmp/cmp"
)

func TestCompile(t *testing.T) {
	tests := []struct {
		schema string
		is     error
		says   string
	}{
		{`[]`, inputschema.ErrNotObject, "must be a JSON object"},
		{`{"type": "array"}`, nil, `"type" must be "object"`},
		{`{"type": "object", "properties": {"n": {"minimum": "SECRET"}}}`, nil, "/properties/n/minimum"},
		{`{"$ref": "file:///etc/SECRET"}`, nil, "self-contained"},
		{`{"$schema": "http://json-schema.org/draft-04/schema#"}`, nil, "draft 2020-12"},
	}
	for _, tt := range tests {
		s, err := inputschema.Compile(json.RawMessage(tt.schema))
		var ce *inputschema.CompileError
		if s != nil || !errors.As(err, &ce) || errors.Is(err, inputschema.ErrNotObject) != (tt.is != nil) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, %v; want %v saying %q", tt.schema, s, err, tt.is, tt.says)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q quotes the schema or spans lines", tt.schema, err)
		}
	}
}

func TestCheck(t *testing.T) {
	ctx := t.Context()
	s, err := inputschema.Compile(json.RawMessage(`{"properties": {"job": {"type": "string"}}, "required": ["job"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx, "job_tool", json.RawMessage(`{"job": "x"}`)); err != nil {
		t.Errorf("a matching input: %v", err)
	}
	err = s.Check(ctx, "job_tool", json.RawMessage(`{"job": 7}`))
	var ie *inputschema.InputError
	if !errors.As(err, &ie) || !errors.Is(err, contract.ErrInvalidInput) {
		t.Fatalf("Check = %v, want an *InputError", err)
	}
	want := []inputschema.Problem{{Field: "/job", Rule: "expected string, but got number"}}
	if diff := cmp.Diff(want, ie.Problems); diff != "" || ie.Tool != "job_tool" {
		t.Errorf("tool %q, problems (-want +got):\n%s", ie.Tool, diff)
	}
	if err := s.Check(ctx, "job_tool", nil); !errors.As(err, &ie) || ie.Problems[0].Field != "/job" {
		t.Errorf("an absent input is checked as {}: %v", err)
	}
}

// TestCheckDecodedAgreesWithCheck: an input checked as the object
// contract.DecodeInput read is judged as its canonical bytes are, and a
// pass is remembered for the same bytes.
func TestCheckDecodedAgreesWithCheck(t *testing.T) {
	const schema = `{"properties": {"job": {"type": "string"}, "n": {"type": "integer", "maximum": 3}}, "required": ["job"]}`
	tests := []struct {
		name, input string
		ok          bool
	}{
		{"match", `{"n": 3, "job": "x"}`, true},
		{"absent", ``, false},
		{"wrong type", `{"job": 7}`, false},
		{"number as written", `{"job": "x", "n": 3.0e0}`, true},
		{"too large", `{"job": "x", "n": 4}`, false},
		{"escaped key", `{"\u006aob": "x"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := contract.DecodeInput(json.RawMessage(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			fromBytes, _ := inputschema.Compile(json.RawMessage(schema))
			fromValue, _ := inputschema.Compile(json.RawMessage(schema))
			want := fromBytes.Check(t.Context(), "t", d.Canonical())
			got := fromValue.CheckDecoded(t.Context(), "t", d)
			if (got == nil) != tt.ok || (want == nil) != tt.ok {
				t.Fatalf("CheckDecoded = %v, Check = %v; want ok=%v", got, want, tt.ok)
			}
			if got != nil {
				if diff := cmp.Diff(want.Error(), got.Error()); diff != "" {
					t.Errorf("refusal (-Check +CheckDecoded):\n%s", diff)
				}
				return
			}
			walks := inputschema.Walks(fromValue)
			if err := fromValue.Check(t.Context(), "t", d.Canonical()); err != nil || inputschema.Walks(fromValue) != walks {
				t.Errorf("Check of the bytes that passed: %v after %d more walks; want nil after none", err, inputschema.Walks(fromValue)-walks)
			}
		})
	}
}
