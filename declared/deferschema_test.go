//go:build unix

package declared_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

// TestDeferSchemas: with DeferSchemas a tool's bad input_schema does not
// stop the load — a call to another tool needs none of it — but every
// call of that tool, preview and Execute, is refused with exactly the
// problems, located in the manifest, that a load without it reports; a
// good tool's schema still refuses bad input.
func TestDeferSchemas(t *testing.T) {
	root := workspace(t, `{"schema": 1, "tools": {
  "good": {"description": "d", "input_schema": {"type": "object", "required": ["n"]}, "command": ["/bin/cat"]},
  "bad": {"description": "d", "input_schema": {"type": "object", "properties": {"n": {"minimum": "SECRET"}, "m": {"type": 7}}}, "command": ["/bin/cat"]}
}}`)
	_, err := declared.Load(context.Background(), root, &declared.Options{Environ: pathEnv()})
	want := problemsOf(t, err)
	if len(want) != 2 {
		t.Fatalf("a load that compiles every schema reports %d problems, want 2: %v", len(want), err)
	}

	tools := loadTools(t, root, &declared.Options{Environ: pathEnv(), DeferSchemas: true})
	if diff := cmp.Diff([]string{"bad", "good"}, names(tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	bad, good := tools[0], tools[1]
	if _, err := good.AuthorizationPreview(context.Background(), callWith(`{"n": 1}`)); err != nil {
		t.Errorf("good tool's preview: %v", err)
	}
	if _, err := good.AuthorizationPreview(context.Background(), callWith(`{}`)); !errors.Is(err, contract.ErrInvalidInput) {
		t.Errorf("good tool's preview of input its schema refuses: %v; want ErrInvalidInput", err)
	}
	uses := []struct {
		name string
		use  func() error
	}{
		{"preview", func() error { _, err := bad.AuthorizationPreview(context.Background(), callWith(`{}`)); return err }},
		{"execute", func() error { _, err := bad.Execute(context.Background(), callWith(`{}`)); return err }},
		{"schema", func() error { return bad.InputSchema().Err() }},
	}
	for _, u := range uses {
		err := u.use()
		if !errors.Is(err, contract.ErrRefused) || !errors.Is(err, declared.ErrInvalidSchema) {
			t.Errorf("%s: %v; want a refusal wrapping the invalid schema", u.name, err)
		}
		var got []*configfile.Error
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if ce, ok := e.(*configfile.Error); ok {
				got = append(got, ce)
			}
		}
		if diff := cmp.Diff(errorStrings(want), errorStrings(got)); diff != "" {
			t.Errorf("%s: problems differ from the load's (-load +deferred):\n%s", u.name, diff)
		}
	}
}

func errorStrings(errs []*configfile.Error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// A tool remembers the canonical input it made last, so the same bytes
// coming back are not read again; what it shows and runs stays the
// canonical form of each call's own input, and input that cannot be read
// unambiguously is refused whatever came before it.
func TestCheckInputAfterRemembered(t *testing.T) {
	root := workspace(t, `{"schema": 1, "tools": {"cat": {"description": "d",
  "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}, "command": ["/bin/cat"]}}}`)
	tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "cat")
	steps := []struct {
		input, runs string // runs: what the program reads; "" for a refusal
	}{
		{`{"b": 1, "a": 2}`, `{"a":2,"b":1}`},
		{`{"a":2,"b":1}`, `{"a":2,"b":1}`},
		{`{"a":2,"b":1,"a":3}`, ""},
		{`{"a":2,"b":1}`, `{"a":2,"b":1}`},
		{`{"a":2,"b":"x"}`, ""},
		{`{"a":2,"b":1}`, `{"a":2,"b":1}`},
		{`{"b":1,"a":2} `, `{"a":2,"b":1}`},
	}
	for i, st := range steps {
		p, perr := tool.AuthorizationPreview(context.Background(), callWith(st.input))
		res, xerr := tool.Execute(context.Background(), callWith(st.input))
		if st.runs == "" {
			if perr == nil || xerr == nil {
				t.Errorf("step %d, %s: preview %v, execute %v; want both refused", i, st.input, perr, xerr)
			}
			continue
		}
		if perr != nil || xerr != nil {
			t.Fatalf("step %d, %s: preview %v, execute %v", i, st.input, perr, xerr)
		}
		if got := res.Text; got != st.runs {
			t.Errorf("step %d, %s: the program read %s; want %s", i, st.input, got, st.runs)
		}
		if !strings.Contains(string(p.Subject), `"input":`+st.runs) {
			t.Errorf("step %d, %s: the preview shows %s; want input %s", i, st.input, p.Subject, st.runs)
		}
	}
}

// With DeferSchemas, a tool that cannot be loaded for another reason has
// its schema's problems listed with the others, as without it.
func TestDeferSchemasBrokenToolListsSchemaProblems(t *testing.T) {
	root := workspace(t, `{"schema": 1, "tools": {
  "lint": {"input_schema": {"type": "array"}, "command": []}
}}`)
	for _, deferred := range []bool{false, true} {
		_, err := declared.Load(context.Background(), root, &declared.Options{Environ: pathEnv(), DeferSchemas: deferred})
		var fields []string
		for _, e := range problemsOf(t, err) {
			fields = append(fields, e.Field)
		}
		if diff := cmp.Diff([]string{"description", "input_schema", "command"}, fields); diff != "" {
			t.Errorf("DeferSchemas %v: problems (-want +got):\n%s", deferred, diff)
		}
	}
}
