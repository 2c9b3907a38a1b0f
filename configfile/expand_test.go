package configfile_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/basis-go/basis/configfile"
)

// testVars is the environment placeholders are expanded from in these
// tests. Every value contains a marker no message may show.
var testVars = map[string]string{
	"TOKEN": "tok-VALUE-1",
	"HOME":  "/home/VALUE-2",
	"EMPTY": "",
	"_X1":   "VALUE-3",
}

func lookupTest(name string) (string, bool) {
	v, ok := testVars[name]
	return v, ok
}

func TestExpand(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"plain", "plain"},
		{"$TOKEN stays: only braces expand", "$TOKEN stays: only braces expand"},
		{"a $ sign, $5 and a lone $", "a $ sign, $5 and a lone $"},
		{"${TOKEN}", "tok-VALUE-1"},
		{"Authorization: Bearer ${TOKEN}", "Authorization: Bearer tok-VALUE-1"},
		{"${HOME}/bin:${_X1}", "/home/VALUE-2/bin:VALUE-3"},
		{"${EMPTY}", ""},
		{"${UNSET:-fallback}", "fallback"},
		{"${EMPTY:-used for empty too}", "used for empty too"},
		{"${TOKEN:-not used}", "tok-VALUE-1"},
		{"${UNSET:-}", ""},
		{"${UNSET:-${HOME}/x}", "/home/VALUE-2/x"},
		{"${UNSET:-${ALSO_UNSET:-deep}}", "deep"},
		{"${TOKEN:-${NEVER_SET}}", "tok-VALUE-1"}, // an unused default is not expanded
		{"${UNSET:-a:-b}", "a:-b"},
		{"${UNSET:-{braces}", "{braces"},
		{"$${TOKEN}", "${TOKEN}"},
		{"$$${TOKEN}", "$${TOKEN}"},
		{"$${", "${"},
		{"}", "}"},
		{"ünïcode ${_X1} ✓", "ünïcode VALUE-3 ✓"},
	}
	for _, tt := range tests {
		got, err := configfile.Expand(tt.in, lookupTest)
		if err != nil {
			t.Errorf("Expand(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		in       string
		kind     configfile.PlaceholderKind
		variable string
		offset   int
		message  string
	}{
		{"${UNSET}", configfile.PlaceholderUnset, "UNSET", 0, "variable UNSET is not set and has no default; set it, or write ${UNSET:-default}"},
		{"x ${TOKEN} ${UNSET}", configfile.PlaceholderUnset, "UNSET", 11, "variable UNSET is not set and has no default; set it, or write ${UNSET:-default}"},
		{"${UNSET:-${ALSO_UNSET}}", configfile.PlaceholderUnset, "ALSO_UNSET", 9, "variable ALSO_UNSET is not set and has no default; set it, or write ${ALSO_UNSET:-default}"},
		{"${}", configfile.PlaceholderEmpty, "", 0, "the ${} at character 1 names no variable; write ${NAME}, or $${ for a literal ${"},
		{"ab${", configfile.PlaceholderUnclosed, "", 2, "the ${ at character 3 is never closed with }"},
		{"${TOKEN", configfile.PlaceholderUnclosed, "TOKEN", 0, "the ${ at character 1 is never closed with }"},
		{"${TOKEN:-x", configfile.PlaceholderUnclosed, "TOKEN", 0, "the ${ at character 1 is never closed with }"},
		{"${1ABC", configfile.PlaceholderUnclosed, "", 0, "the ${ at character 1 is never closed with }"},
		{"${ TOKEN}", configfile.PlaceholderNoName, "", 0, "the ${ at character 1 is not followed by a variable name (letters, digits, _); write $${ for a literal ${"},
		{"${1ABC}", configfile.PlaceholderBadName, "", 0, "the placeholder at character 1 names no valid variable: a name starts with a letter or _"},
		{"${TOKEN-x}", configfile.PlaceholderUnsupported, "TOKEN", 0, "the placeholder at character 1 uses a form basis does not support; write ${TOKEN} or ${TOKEN:-default}"},
		{"${TOKEN:?required}", configfile.PlaceholderUnsupported, "TOKEN", 0, "the placeholder at character 1 uses a form basis does not support; write ${TOKEN} or ${TOKEN:-default}"},
		{"${#TOKEN}", configfile.PlaceholderNoName, "", 0, "the ${ at character 1 is not followed by a variable name (letters, digits, _); write $${ for a literal ${"},
		{"${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I:-x}}}}}}}}}", configfile.PlaceholderTooDeep, "I", 40, "placeholders at character 41 are nested more than 8 deep"},
		{"${TOKEN:-${}}", configfile.PlaceholderEmpty, "", 9, "the ${} at character 10 names no variable; write ${NAME}, or $${ for a literal ${"},
		// Positions count characters, as an editor does, not bytes.
		{"héllo ✓ ${}", configfile.PlaceholderEmpty, "", 11, "the ${} at character 9 names no variable; write ${NAME}, or $${ for a literal ${"},
	}
	for _, tt := range tests {
		_, err := configfile.Expand(tt.in, lookupTest)
		var xe *configfile.ExpandError
		if !errors.As(err, &xe) {
			t.Errorf("Expand(%q) = %v, want an *ExpandError", tt.in, err)
			continue
		}
		sentinel := configfile.ErrPlaceholder
		if tt.kind == configfile.PlaceholderUnset {
			sentinel = configfile.ErrUnsetVariable
		}
		if !errors.Is(err, sentinel) {
			t.Errorf("Expand(%q) = %v, want errors.Is %v", tt.in, err, sentinel)
		}
		got := [4]any{xe.Kind, xe.Variable, xe.Offset, err.Error()}
		want := [4]any{tt.kind, tt.variable, tt.offset, tt.message}
		if got != want {
			t.Errorf("Expand(%q) kind, variable, offset, message = %v, want %v", tt.in, got, want)
		}
		if !strings.HasPrefix(tt.in[xe.Offset:], "${") {
			t.Errorf("Expand(%q): offset %d is not at a ${", tt.in, xe.Offset)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		in    string
		names []string
		kind  configfile.PlaceholderKind // "": no error
	}{
		{"plain", nil, ""},
		{"${UNSET}", []string{"UNSET"}, ""}, // not looked up: no error
		{"${A}/${B:-${C}}", []string{"A", "B", "C"}, ""},
		{"$${A}", nil, ""},
		{"${A} ${B-x}", nil, configfile.PlaceholderUnsupported},
		{"${A:-${}", nil, configfile.PlaceholderEmpty},
	}
	for _, tt := range tests {
		names, err := configfile.Placeholders(tt.in)
		var kind configfile.PlaceholderKind
		var xe *configfile.ExpandError
		if errors.As(err, &xe) {
			kind = xe.Kind
		} else if err != nil {
			t.Errorf("Placeholders(%q) error %T is not an *ExpandError", tt.in, err)
		}
		if !reflect.DeepEqual(names, tt.names) || kind != tt.kind {
			t.Errorf("Placeholders(%q) = %q, kind %q; want %q, kind %q", tt.in, names, kind, tt.names, tt.kind)
		}
	}
}

func TestHasPlaceholder(t *testing.T) {
	tests := map[string]bool{
		"":             false,
		"build":        false,
		"$HOME":        false,
		"$${LITERAL}":  false,
		"$$${LITERAL}": false,
		"${X}":         true,
		"a/${X}/b":     true,
		"$${L}${X}":    true,
		"${":           true, // malformed, but not plain text either
	}
	for in, want := range tests {
		if got := configfile.HasPlaceholder(in); got != want {
			t.Errorf("HasPlaceholder(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsVarName(t *testing.T) {
	for name, want := range map[string]bool{"A": true, "_x1": true, "PATH": true, "": false, "1A": false, "A-B": false, "É": false, "A B": false} {
		if got := configfile.IsVarName(name); got != want {
			t.Errorf("IsVarName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzExpand checks that expansion never panics, that an error is one
// line naming at most a valid variable name at a true position, that no
// error ever carries a value from the environment or text from the string
// outside a variable name, and that Placeholders agrees with Expand on
// what is malformed.
//
// Inputs are bounded to maxFuzzExpandLen bytes: expansion is one pass, so
// a longer string reaches no code a shorter one does not, while Go's
// minimizer, run on every input that finds new coverage, costs time
// quadratic in the input's length. Unbounded, the cache corpus grew inputs
// of about 10 KB whose minimization held a worker at full CPU, running
// nothing else, for up to the whole -fuzzminimizetime.
func FuzzExpand(f *testing.F) {
	const maxFuzzExpandLen = 256
	for _, seed := range []string{
		"", "plain", "${TOKEN}", "${UNSET}", "${UNSET:-d}", "${EMPTY:-${HOME}}", "$${x}", "${", "${}", "${1}",
		"${A:-${B:-${C}}}", "${TOKEN:?x}", "a${TOKEN}b${_X1}c", "${TOKEN:-${", "}}}${{{", "$$$$${TOKEN}", "é${}",
		"${MY_VALUE}", "${VALUE:-${VALUE_2}}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzExpandLen {
			return
		}
		// Literal text is framed by a marker that cannot be part of a
		// variable name; no message may show it.
		const marker = "#~lit~#"
		in := marker + s + marker
		out, err := configfile.Expand(in, lookupTest)
		_, syntaxErr := configfile.Placeholders(in)
		if err == nil {
			if syntaxErr != nil {
				t.Fatalf("Expand(%q) succeeded but Placeholders says %v", in, syntaxErr)
			}
			if !strings.Contains(s, "${") && out != in {
				t.Fatalf("Expand(%q) changed text without placeholders: %q", in, out)
			}
			return
		}
		var xe *configfile.ExpandError
		if !errors.As(err, &xe) {
			t.Fatalf("Expand(%q) error %T is not an *ExpandError", in, err)
		}
		if (xe.Kind == configfile.PlaceholderUnset) != errors.Is(err, configfile.ErrUnsetVariable) || !errors.Is(err, configfile.ErrUnsetVariable) && !errors.Is(err, configfile.ErrPlaceholder) {
			t.Fatalf("Expand(%q) error %v wraps the wrong sentinel", in, err)
		}
		if xe.Kind != configfile.PlaceholderUnset && syntaxErr == nil {
			t.Fatalf("Expand(%q) = %v but Placeholders finds nothing malformed", in, err)
		}
		if xe.Offset < 0 || !strings.HasPrefix(in[xe.Offset:], "${") || xe.Char != utf8.RuneCountInString(in[:xe.Offset])+1 {
			t.Fatalf("Expand(%q) error at offset %d, character %d: not a placeholder's start", in, xe.Offset, xe.Char)
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
			t.Fatalf("message is not one clean line: %q", msg)
		}
		// A variable's name may well contain "VALUE" (${MY_VALUE}); what
		// must not appear is a value itself.
		if strings.Contains(msg, "~") {
			t.Fatalf("message shows text from outside a variable name: %q", msg)
		}
		for _, v := range testVars {
			if v != "" && strings.Contains(msg, v) {
				t.Fatalf("message shows the value %q: %q", v, msg)
			}
		}
		if xe.Variable != "" && !configfile.IsVarName(xe.Variable) {
			t.Fatalf("variable %q is not a variable name", xe.Variable)
		}
	})
}
