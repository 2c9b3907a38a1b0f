package configfile

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPlaceholderDepth bounds ${A:-${B:-...}} nesting, so a hostile
// config file cannot make expansion recurse without end.
const MaxPlaceholderDepth = 8

// Sentinels for [errors.Is]; every [*ExpandError] wraps one of them.
var (
	// ErrUnsetVariable: a ${VAR} without a default names a variable that
	// is not set.
	ErrUnsetVariable = errors.New("unset variable")
	// ErrPlaceholder: a malformed placeholder: an empty ${}, an unclosed
	// ${, a bad variable name, nesting deeper than [MaxPlaceholderDepth],
	// or a form other than ${VAR} and ${VAR:-default}.
	ErrPlaceholder = errors.New("malformed placeholder")
)

// PlaceholderKind says what is wrong with a placeholder. It is a string
// so that a kind prints as itself in a test failure or a log.
type PlaceholderKind string

// The problems [Expand] and [Placeholders] report. The zero value, "", is
// no kind, so an ExpandError built by hand without one is not mistaken for
// any of these.
const (
	// PlaceholderUnset: ${VAR} names a variable that is not set, and has
	// no default. The only kind that depends on the environment.
	PlaceholderUnset PlaceholderKind = "unset"
	// PlaceholderUnclosed: a ${ is never closed with }.
	PlaceholderUnclosed PlaceholderKind = "unclosed"
	// PlaceholderEmpty: ${} names no variable.
	PlaceholderEmpty PlaceholderKind = "empty"
	// PlaceholderNoName: ${ is followed by something other than a
	// variable name.
	PlaceholderNoName PlaceholderKind = "no_name"
	// PlaceholderBadName: the name starts with a digit.
	PlaceholderBadName PlaceholderKind = "bad_name"
	// PlaceholderTooDeep: defaults are nested more than
	// [MaxPlaceholderDepth] deep.
	PlaceholderTooDeep PlaceholderKind = "too_deep"
	// PlaceholderUnsupported: a shell form other than ${VAR} and
	// ${VAR:-default}, such as ${VAR-x} or ${VAR:?x}.
	PlaceholderUnsupported PlaceholderKind = "unsupported"
)

// ExpandError is why a string could not be expanded. It names the
// variable and where the placeholder starts, never a value and never the
// text around the placeholder: either may be a credential.
type ExpandError struct {
	// Variable is the variable the placeholder names; empty when it names
	// none, or nothing that is a variable name.
	Variable string
	// Kind is what is wrong.
	Kind PlaceholderKind
	// Offset is the byte offset of the placeholder's "$" in the string.
	Offset int
	// Char is the same position as a 1-based count of characters, as
	// messages give it.
	Char int
}

// Error returns a message that says what to write instead.
func (e *ExpandError) Error() string {
	at := "at character " + strconv.Itoa(e.Char)
	switch e.Kind {
	case PlaceholderUnset:
		return "variable " + e.Variable + " is not set and has no default; set it, or write ${" + e.Variable + ":-default}"
	case PlaceholderUnclosed:
		return "the ${ " + at + " is never closed with }"
	case PlaceholderEmpty:
		return "the ${} " + at + " names no variable; write ${NAME}, or $${ for a literal ${"
	case PlaceholderNoName:
		return "the ${ " + at + " is not followed by a variable name (letters, digits, _); write $${ for a literal ${"
	case PlaceholderBadName:
		return "the placeholder " + at + " names no valid variable: a name starts with a letter or _"
	case PlaceholderTooDeep:
		return "placeholders " + at + " are nested more than " + strconv.Itoa(MaxPlaceholderDepth) + " deep"
	case PlaceholderUnsupported:
		return "the placeholder " + at + " uses a form basis does not support; write ${" + e.Variable + "} or ${" + e.Variable + ":-default}"
	}
	return "malformed placeholder " + at
}

// Unwrap returns [ErrUnsetVariable] for an unset variable and
// [ErrPlaceholder] for every other kind.
func (e *ExpandError) Unwrap() error {
	if e.Kind == PlaceholderUnset {
		return ErrUnsetVariable
	}
	return ErrPlaceholder
}

// Expand replaces ${NAME} and ${NAME:-default} in s, looking names up with
// lookup. As in a shell, ":-" uses the default when the variable is unset
// or empty, and the default may itself hold placeholders, expanded only
// when it is used (an unused default must still be well formed). "$${"
// writes a literal "${". Anything else that starts with "${" and is not
// one of these forms is an error; a "$" not followed by "{" is literal.
// Every error is an [*ExpandError].
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	x := &expander{s: s, lookup: lookup}
	out, err := x.text(0, true)
	if err != nil {
		return "", err
	}
	return out, nil
}

// Placeholders checks the placeholders of s without looking any variable
// up, and lists the variables they name, defaults included, in order. An
// error is an [*ExpandError] for the first malformed placeholder; a
// variable that is not set is no error here.
func Placeholders(s string) ([]string, error) {
	if !strings.Contains(s, "${") {
		return nil, nil
	}
	var names []string
	x := &expander{s: s, names: &names}
	if _, err := x.text(0, false); err != nil {
		return nil, err
	}
	return names, nil
}

// HasPlaceholder reports whether s holds a ${...} that expansion would
// replace (or reject), so that a preview knows to show s as written.
func HasPlaceholder(s string) bool {
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			i += 3 // a literal "${", as expansion reads it
		case strings.HasPrefix(s[i:], "${"):
			return true
		default:
			i++
		}
	}
	return false
}

// IsVarName reports whether s is a shell variable name: a letter or _
// followed by letters, digits and _.
func IsVarName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !varNameByte(s[i]) {
			return false
		}
	}
	return true
}

func varNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

type expander struct {
	s      string
	i      int
	lookup func(string) (string, bool)
	names  *[]string // when set, collects every variable named
}

// text reads up to the end of the string (depth 0) or up to the "}" that
// closes a default (depth > 0), which it leaves unread. When eval is false
// it only checks the syntax: an unused default must still be well formed,
// but an unset variable inside it is no error.
func (x *expander) text(depth int, eval bool) (string, error) {
	var b strings.Builder
	for x.i < len(x.s) {
		c := x.s[x.i]
		switch {
		case depth > 0 && c == '}':
			return b.String(), nil
		case strings.HasPrefix(x.s[x.i:], "$${"):
			b.WriteString("${")
			x.i += 3
		case strings.HasPrefix(x.s[x.i:], "${"):
			v, err := x.placeholder(depth, eval)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		default:
			b.WriteByte(c)
			x.i++
		}
	}
	if depth > 0 {
		return "", nil // the caller reports the unclosed placeholder
	}
	return b.String(), nil
}

// placeholder reads one ${...} starting at x.i.
func (x *expander) placeholder(depth int, eval bool) (string, error) {
	start := x.i
	x.i += 2
	nameStart := x.i
	for x.i < len(x.s) && varNameByte(x.s[x.i]) {
		x.i++
	}
	name := x.s[nameStart:x.i]
	switch {
	case x.i >= len(x.s):
		return "", x.fail(start, name, PlaceholderUnclosed)
	case name == "" && x.s[x.i] == '}':
		return "", x.fail(start, "", PlaceholderEmpty)
	case name == "":
		return "", x.fail(start, "", PlaceholderNoName)
	case !IsVarName(name):
		return "", x.fail(start, "", PlaceholderBadName)
	}
	if x.names != nil {
		*x.names = append(*x.names, name)
	}
	switch {
	case x.s[x.i] == '}':
		x.i++
		if !eval {
			return "", nil
		}
		if v, ok := x.lookup(name); ok {
			return v, nil
		}
		return "", x.fail(start, name, PlaceholderUnset)
	case strings.HasPrefix(x.s[x.i:], ":-"):
		x.i += 2
		if depth+1 > MaxPlaceholderDepth {
			return "", x.fail(start, name, PlaceholderTooDeep)
		}
		v, set := "", false
		if eval {
			v, set = x.lookup(name)
			set = set && v != ""
		}
		def, err := x.text(depth+1, eval && !set)
		if err != nil {
			return "", err
		}
		if x.i >= len(x.s) {
			return "", x.fail(start, name, PlaceholderUnclosed)
		}
		x.i++ // the closing }
		if set {
			return v, nil
		}
		return def, nil
	default:
		return "", x.fail(start, name, PlaceholderUnsupported)
	}
}

func (x *expander) fail(start int, variable string, kind PlaceholderKind) error {
	if !IsVarName(variable) {
		variable = ""
	}
	return &ExpandError{Variable: variable, Kind: kind, Offset: start, Char: utf8.RuneCountInString(x.s[:start]) + 1}
}
