//go:build unix

package mcpbind

import (
	"strconv"
	"strings"
)

// maxPlaceholderDepth bounds ${A:-${B:-...}} nesting, so a hostile
// config file cannot make expansion recurse without end.
const maxPlaceholderDepth = 8

// expandError is why a string could not be expanded. It names the
// variable (a name, never a value) and the byte position of the
// placeholder, never the text around it.
type expandError struct {
	variable string
	err      error
}

func (e *expandError) Error() string { return e.err.Error() }
func (e *expandError) Unwrap() error { return e.err }

// expand replaces ${NAME} and ${NAME:-default} in s, looking names up with
// lookup. As in a shell, ":-" uses the default when the variable is unset
// or empty, and the default may itself hold placeholders, expanded only
// when it is used. "$${" writes a literal "${". Anything else that starts
// with "${" and is not one of these forms is an error; a "$" not followed
// by "{" is literal.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
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

// hasPlaceholder reports whether s holds a ${...} that expansion would
// replace, so that a preview knows the text is a template.
func hasPlaceholder(s string) bool {
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

type expander struct {
	s      string
	i      int
	lookup func(string) (string, bool)
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
	for x.i < len(x.s) && nameByte(x.s[x.i]) {
		x.i++
	}
	name := x.s[nameStart:x.i]
	at := "at character " + strconv.Itoa(start+1)
	if x.i >= len(x.s) {
		return "", x.fail(name, "the ${ "+at+" is never closed with }")
	}
	if name == "" {
		if x.s[x.i] == '}' {
			return "", x.fail("", "the ${} "+at+" names no variable; write ${NAME}, or $${ for a literal ${")
		}
		return "", x.fail("", "the ${ "+at+" is not followed by a variable name (letters, digits, _); write $${ for a literal ${")
	}
	if !validVarName(name) {
		return "", x.fail("", "the placeholder "+at+" names no valid variable: a name starts with a letter or _")
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
		return "", &expandError{variable: name, err: newProblem(ErrUnsetVariable,
			"variable "+name+" is not set and has no default; set it, or write ${"+name+":-default}")}
	case strings.HasPrefix(x.s[x.i:], ":-"):
		x.i += 2
		if depth+1 > maxPlaceholderDepth {
			return "", x.fail(name, "placeholders "+at+" are nested more than "+strconv.Itoa(maxPlaceholderDepth)+" deep")
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
			return "", x.fail(name, "the ${ "+at+" is never closed with }")
		}
		x.i++ // the closing }
		if set {
			return v, nil
		}
		return def, nil
	default:
		return "", x.fail(name, "the placeholder "+at+" uses a form basis does not support; write ${"+name+"} or ${"+name+":-default}")
	}
}

func (x *expander) fail(variable, text string) error {
	if !validVarName(variable) {
		variable = ""
	}
	return &expandError{variable: variable, err: newProblem(ErrPlaceholder, text)}
}

// validVarName reports whether s is a shell variable name: a letter or _
// followed by letters, digits and _.
func validVarName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
