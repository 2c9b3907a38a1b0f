package declared

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// TestWithObjectType: "type" is added only where the schema's top level
// has none, however its key is written; a "type" deeper down does not
// count, and what is not an object is left alone.
func TestWithObjectType(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", `{}`, `{"type":"object"}`},
		{"empty with spaces", ` { } `, `{"type":"object"}`},
		{"no type", `{"properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"type given", `{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{"type last", `{"properties":{},"type":"object"}`, `{"properties":{},"type":"object"}`},
		{"type escaped", `{"\u0074ype":"object"}`, `{"\u0074ype":"object"}`},
		{"type in a string value", `{"description":"\"type\": x"}`, `{"type":"object","description":"\"type\": x"}`},
		{"type after nesting", `{"properties":{"a":{"enum":["}",{"x":"]"}]}},"a\"b":1,"n":-1.5e3,"t":true,"z":null,"type":"object"}`, `{"properties":{"a":{"enum":["}",{"x":"]"}]}},"a\"b":1,"n":-1.5e3,"t":true,"z":null,"type":"object"}`},
		{"type after spaces", "{ \"a\" :\n [ 1 , 2 ] ,\t\"type\" : \"object\" }", "{ \"a\" :\n [ 1 , 2 ] ,\t\"type\" : \"object\" }"},
		{"a key in another case", `{"Type":"object"}`, `{"type":"object","Type":"object"}`},
		{"type only nested", `{"items":{"type":"string"},"x":{"type":1}}`, `{"type":"object","items":{"type":"string"},"x":{"type":1}}`},
		{"escaped backslash before the quote", `{"a\\":{"type":2}}`, `{"type":"object","a\\":{"type":2}}`},
		{"not an object", `true`, `true`},
		{"not JSON", `{"a":`, `{"a":`},
		{"a form feed after it, which JSON refuses", "{}\f", "{}\f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, string(withObjectType(json.RawMessage(tc.in)))); diff != "" {
				t.Errorf("withObjectType(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// The confinements held for previewed calls are bounded: a preview whose
// call never runs is dropped once maxPreviewed newer ones are held, and
// a run takes its call's once.
func TestPreviewedConfinementsBounded(t *testing.T) {
	var p previewedConfinements
	held := func(i int) *subprocess.Confinement { return &subprocess.Confinement{Summary: strconv.Itoa(i)} }
	for i := range maxPreviewed + 1 {
		p.put("call_"+strconv.Itoa(i), held(i))
	}
	p.put("call_5", held(-5)) // a second preview of one call replaces the first
	p.put("", held(-1))       // a call without an ID is not held
	if c := p.take("call_0"); c != nil {
		t.Errorf("the oldest preview is still held (%q); want it dropped", c.Summary)
	}
	if c := p.take("call_5"); c == nil || c.Summary != "-5" {
		t.Errorf("call_5 took %v; want its second preview's", c)
	}
	if c := p.take("call_5"); c != nil {
		t.Errorf("call_5's confinement was taken twice")
	}
	if c := p.take(""); c != nil {
		t.Errorf("a call without an ID took %q", c.Summary)
	}
	last := "call_" + strconv.Itoa(maxPreviewed)
	if c := p.take(last); c == nil || c.Summary != strconv.Itoa(maxPreviewed) {
		t.Errorf("%s took %v; want its own", last, c)
	}
	if len(p.byID) != len(p.order) || len(p.order) != maxPreviewed-2 {
		t.Errorf("%d held, %d in order; want %d of each", len(p.byID), len(p.order), maxPreviewed-2)
	}
}
