//go:build unix

package declared

import (
	"errors"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/google/go-cmp/cmp"
)

// The grammar itself is configfile's and tested there; these tests hold
// that a manifest's placeholders get exactly it: configfile's sentinels,
// wording and variable, nothing of this package's own.

func lookupTest(name string) (string, bool) {
	v, ok := map[string]string{"TOKEN": "tok-VALUE-1", "EMPTY": ""}[name]
	return v, ok
}

func TestExpand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Bearer ${TOKEN}", "Bearer tok-VALUE-1"},
		{"${EMPTY:-used for empty too}", "used for empty too"},
		{"$${TOKEN} $HOME", "${TOKEN} $HOME"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, lookupTest)
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		in       string
		is       error
		kind     configfile.PlaceholderKind
		variable string
		message  string
	}{
		{"x ${TOKEN} ${UNSET}", configfile.ErrUnsetVariable, configfile.PlaceholderUnset, "UNSET", "variable UNSET is not set and has no default; set it, or write ${UNSET:-default}"},
		{"${UNSET:-${ALSO_UNSET}}", configfile.ErrUnsetVariable, configfile.PlaceholderUnset, "ALSO_UNSET", "variable ALSO_UNSET is not set and has no default; set it, or write ${ALSO_UNSET:-default}"},
		{"ab${", configfile.ErrPlaceholder, configfile.PlaceholderUnclosed, "", "the ${ at character 3 is never closed with }"},
		{"${TOKEN-x}", configfile.ErrPlaceholder, configfile.PlaceholderUnsupported, "TOKEN", "the placeholder at character 1 uses a form basis does not support; write ${TOKEN} or ${TOKEN:-default}"},
		{"${1ABC}", configfile.ErrPlaceholder, configfile.PlaceholderBadName, "", "the placeholder at character 1 names no valid variable: a name starts with a letter or _"},
		{"été ${}", configfile.ErrPlaceholder, configfile.PlaceholderEmpty, "", "the ${} at character 5 names no variable; write ${NAME}, or $${ for a literal ${"},
	}
	for _, tt := range tests {
		_, err := expand(tt.in, lookupTest)
		var xe *configfile.ExpandError
		if !errors.As(err, &xe) {
			t.Errorf("expand(%q) = %v, want a *configfile.ExpandError", tt.in, err)
			continue
		}
		other := configfile.ErrPlaceholder
		if tt.is == configfile.ErrPlaceholder {
			other = configfile.ErrUnsetVariable
		}
		if !errors.Is(err, tt.is) || errors.Is(err, other) {
			t.Errorf("expand(%q) = %v, want errors.Is %v only", tt.in, err, tt.is)
		}
		if diff := cmp.Diff([3]any{tt.kind, tt.variable, tt.message}, [3]any{xe.Kind, xe.Variable, err.Error()}); diff != "" {
			t.Errorf("expand(%q) kind, variable and message (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestPlaceholderNames(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"plain", nil},
		{"${A}/${B:-${C}}", []string{"A", "B", "C"}},
		{"${A} ${", nil}, // malformed: reported by expansion, not here
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, placeholderNames(tt.in)); diff != "" {
			t.Errorf("placeholderNames(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
