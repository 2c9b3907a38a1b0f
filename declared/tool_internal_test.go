package declared

import (
	"encoding/json"
	"testing"

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
