//go:build unix

package declared

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
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
		got, err := expand(tt.in, lookupTest)
		if err != nil {
			t.Errorf("expand(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		in       string
		is       error
		variable string
		message  string
	}{
		{"${UNSET}", ErrUnsetVariable, "UNSET", "variable UNSET is not set and has no default; set it, or write ${UNSET:-default}"},
		{"x ${TOKEN} ${UNSET}", ErrUnsetVariable, "UNSET", "variable UNSET is not set and has no default; set it, or write ${UNSET:-default}"},
		{"${UNSET:-${ALSO_UNSET}}", ErrUnsetVariable, "ALSO_UNSET", "variable ALSO_UNSET is not set and has no default; set it, or write ${ALSO_UNSET:-default}"},
		{"${}", ErrPlaceholder, "", "the ${} at character 1 names no variable; write ${NAME}, or $${ for a literal ${"},
		{"ab${", ErrPlaceholder, "", "the ${ at character 3 is never closed with }"},
		{"${TOKEN", ErrPlaceholder, "TOKEN", "the ${ at character 1 is never closed with }"},
		{"${TOKEN:-x", ErrPlaceholder, "TOKEN", "the ${ at character 1 is never closed with }"},
		{"${ TOKEN}", ErrPlaceholder, "", "the ${ at character 1 is not followed by a variable name (letters, digits, _); write $${ for a literal ${"},
		{"${1ABC}", ErrPlaceholder, "", "the placeholder at character 1 names no valid variable: a name starts with a letter or _"},
		{"${TOKEN-x}", ErrPlaceholder, "TOKEN", "the placeholder at character 1 uses a form basis does not support; write ${TOKEN} or ${TOKEN:-default}"},
		{"${TOKEN:?required}", ErrPlaceholder, "TOKEN", "the placeholder at character 1 uses a form basis does not support; write ${TOKEN} or ${TOKEN:-default}"},
		{"${#TOKEN}", ErrPlaceholder, "", "the ${ at character 1 is not followed by a variable name (letters, digits, _); write $${ for a literal ${"},
		{"${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I:-x}}}}}}}}}", ErrPlaceholder, "I", "placeholders at character 41 are nested more than 8 deep"},
		{"${TOKEN:-${}}", ErrPlaceholder, "", "the ${} at character 10 names no variable; write ${NAME}, or $${ for a literal ${"},
	}
	for _, tt := range tests {
		_, err := expand(tt.in, lookupTest)
		var xe *expandError
		if !errors.As(err, &xe) {
			t.Errorf("expand(%q) = %v, want an *expandError", tt.in, err)
			continue
		}
		if !errors.Is(err, tt.is) {
			t.Errorf("expand(%q) = %v, want errors.Is %v", tt.in, err, tt.is)
		}
		if diff := cmp.Diff([2]string{tt.variable, tt.message}, [2]string{xe.variable, err.Error()}); diff != "" {
			t.Errorf("expand(%q) variable and message (-want +got):\n%s", tt.in, diff)
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
		if got := hasPlaceholder(in); got != want {
			t.Errorf("hasPlaceholder(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzExpand checks that expansion never panics, that an error is one
// line naming at most a valid variable name, and that no error ever
// carries a value from the environment or text from the string outside
// a variable name.
func FuzzExpand(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "${TOKEN}", "${UNSET}", "${UNSET:-d}", "${EMPTY:-${HOME}}", "$${x}", "${", "${}", "${1}",
		"${A:-${B:-${C}}}", "${TOKEN:?x}", "a${TOKEN}b${_X1}c", "${TOKEN:-${", "}}}${{{", "$$$$${TOKEN}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Literal text is framed by a marker that cannot be part of a
		// variable name; no message may show it.
		const marker = "#~lit~#"
		in := marker + s + marker
		out, err := expand(in, lookupTest)
		if err == nil {
			if !strings.Contains(s, "${") && out != in {
				t.Fatalf("expand(%q) changed text without placeholders: %q", in, out)
			}
			return
		}
		var xe *expandError
		if !errors.As(err, &xe) {
			t.Fatalf("expand(%q) error %T is not an *expandError", in, err)
		}
		if !errors.Is(err, ErrUnsetVariable) && !errors.Is(err, ErrPlaceholder) {
			t.Fatalf("expand(%q) error %v wraps no sentinel", in, err)
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
			t.Fatalf("message is not one clean line: %q", msg)
		}
		if strings.Contains(msg, "~") || strings.Contains(msg, "VALUE") {
			t.Fatalf("message shows text or a value: %q", msg)
		}
		if xe.variable != "" && !validVarName(xe.variable) {
			t.Fatalf("variable %q is not a variable name", xe.variable)
		}
	})
}
