//go:build unix

package declared

import (
	"errors"

	"github.com/basis-go/basis/configfile"
)

// Placeholders are expanded by configfile, the one grammar for every
// config file basis reads: ${VAR}, and ${VAR:-default} for unset or empty
// (see configfile.Expand). What is left here is saying it in this
// package's terms.

// expandError is why a string could not be expanded: the variable it
// names (a name, never a value) and a cause wrapping [ErrUnsetVariable] or
// [ErrPlaceholder], and beneath it the *configfile.ExpandError.
type expandError struct {
	variable string
	err      error
}

func (e *expandError) Error() string { return e.err.Error() }
func (e *expandError) Unwrap() error { return e.err }

// expand replaces ${NAME} and ${NAME:-default} in s, looking names up with
// lookup; every error is an *expandError.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	out, err := configfile.Expand(s, lookup)
	if err != nil {
		return "", newExpandError(err)
	}
	return out, nil
}

func newExpandError(err error) *expandError {
	var xe *configfile.ExpandError
	if !errors.As(err, &xe) {
		return &expandError{err: &problem{kind: ErrPlaceholder, cause: err, text: err.Error()}}
	}
	kind := ErrPlaceholder
	if xe.Kind == configfile.PlaceholderUnset {
		kind = ErrUnsetVariable
	}
	return &expandError{variable: xe.Variable, err: &problem{kind: kind, cause: xe, text: xe.Error()}}
}

// hasPlaceholder reports whether s holds a ${...} that expansion would
// replace, so that a preview knows to show s as written.
func hasPlaceholder(s string) bool { return configfile.HasPlaceholder(s) }

// placeholderNames lists the variables s names, defaults included, in
// order; nil when s has none or is malformed (that is reported by
// expansion).
func placeholderNames(s string) []string {
	names, err := configfile.Placeholders(s)
	if err != nil {
		return nil
	}
	return names
}

// validVarName reports whether s is a shell variable name: a letter or _
// followed by letters, digits and _.
func validVarName(s string) bool { return configfile.IsVarName(s) }

// nameByte reports whether c is one of A-Z a-z 0-9 _.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
