package sandbox

import (
	"reflect"
	"testing"
)

// Two calls share a kept thread only when their specs agree on every
// field but the program and the tag: a field keptKey did not write would
// let a call run in a thread confined for another. Each field, set
// differently, must give another key, also a field added to the spec
// later; moving a path from one list to the next, or splitting one, must
// too.
func TestKeptKeyCoversTheSpec(t *testing.T) {
	base := spec{Version: specVersion, Net: "namespace", Write: []string{"/w"}, Protect: []string{"/p"}, Read: []string{"/r"}}
	baseKey := keptKey(base)
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		changed := base
		v := reflect.ValueOf(&changed).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.ValueOf("/more")))
		default:
			t.Fatalf("field %s is a %s, which this test does not change: teach it, and keptKey", f.Name, v.Kind())
		}
		same := keptKey(changed) == baseKey
		if ignored := f.Name == "Program" || f.Name == "Tag"; same != ignored {
			t.Errorf("changing %s: same key %v, want %v", f.Name, same, ignored)
		}
	}
	for _, tc := range []struct {
		name string
		a, b spec
	}{
		{"a path moved to the next list", spec{Write: []string{"/a", "/b"}}, spec{Write: []string{"/a"}, Protect: []string{"/b"}}},
		{"a path split in two", spec{Write: []string{"/a/b"}}, spec{Write: []string{"/a", "b"}}},
		{"a boundary moved within a list", spec{Write: []string{"/a", "b"}}, spec{Write: []string{"/ab", ""}}},
		{"a path and the empty list after it", spec{Write: []string{"/a"}}, spec{Write: []string{"/a", ""}}},
	} {
		if keptKey(tc.a) == keptKey(tc.b) {
			t.Errorf("%s: one key for two specs", tc.name)
		}
	}
}
