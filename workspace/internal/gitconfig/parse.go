package gitconfig

import (
	"errors"
	"fmt"
	"strings"
)

// Entry is one variable of a config file, as git sees it.
type Entry struct {
	// Section and Name are lower-cased, as git compares them. Subsection
	// keeps its case ([diff "Foo"]) except in the old [section.sub] form,
	// which git lower-cases whole.
	Section, Subsection, Name string
	// Value is the value after git's unquoting and escapes, up to any NUL
	// byte (git reads values as C strings). NoValue: the variable was
	// written without "=" (git reads it as boolean true).
	Value   string
	NoValue bool
	// Line is the 1-based line the variable's name is on.
	Line int
	// full is the name as git keys it: "section.subsection.name".
	full string
}

// Key is the variable's full name as git prints it: section, subsection
// (when there is one) and name, joined by dots.
func (e Entry) Key() string { return e.full }

// SyntaxError is where git would stop reading a config file ("bad config
// line N").
type SyntaxError struct {
	// Line is the 1-based line of the problem.
	Line int
}

// ErrSyntax is wrapped by every [*SyntaxError].
var ErrSyntax = errors.New("not a git config git can read")

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, ErrSyntax) }

// Unwrap returns [ErrSyntax].
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

type parser struct {
	data []byte
	pos  int
	line int
	eof  bool
	// nl: the last byte read was a newline that was counted, so a
	// problem found on it is on the line before.
	nl bool
}

// errLine is the line a problem found at the last byte read is on.
func (p *parser) errLine() int {
	if p.nl {
		return p.line - 1
	}
	return p.line
}

// next is git's get_next_char: "\r\n" reads as "\n", the end of the data
// as a final "\n" (with p.eof set), and each "\n" counts a line.
func (p *parser) next() int {
	p.nl = false
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := int(p.data[p.pos])
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
		p.nl = true
	}
	return c
}

// isSpace, isAlpha and isKeyChar are git's sane_ctype: ASCII only, and
// "space" is tab, newline, carriage return and space — not \v or \f.
func isSpace(c int) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c int) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c int) bool { return '0' <= c && c <= '9' }

// isKeyChar: letters, digits and '-', what a section or variable name
// is made of.
func isKeyChar(c int) bool { return isAlpha(c) || isDigit(c) || c == '-' }

func lower(c int) byte {
	if 'A' <= c && c <= 'Z' {
		return byte(c + 'a' - 'A')
	}
	return byte(c)
}

// Parse reads a git config file's text. It returns the variables in the
// order written; on text git would refuse, the variables before the
// problem and a [*SyntaxError] naming its line. include.path and
// includeIf.*.path are returned as variables, not followed.
func Parse(data []byte) ([]Entry, error) {
	p := &parser{data: data, line: 1}
	var out []Entry
	var base []byte // "section." or "section.subsection."
	// A UTF-8 byte order mark at the start is skipped; a partial one is
	// an error, as in git.
	if len(data) > 0 && data[0] == 0xef {
		if len(data) < 3 || data[1] != 0xbb || data[2] != 0xbf {
			return nil, &SyntaxError{Line: 1}
		}
		p.pos = 3
	}
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			name, err := p.baseVar()
			if err != nil || len(name) == 0 {
				return out, &SyntaxError{Line: p.errLine()}
			}
			base = append(name, '.')
			continue
		}
		if !isAlpha(c) {
			return out, &SyntaxError{Line: p.errLine()}
		}
		line := p.line
		e, err := p.variable(base, c)
		if err != nil {
			return out, &SyntaxError{Line: p.errLine()}
		}
		e.Line = line
		out = append(out, e)
	}
}

var errBad = errors.New("bad")

// baseVar is git's get_base_var, after the '[': a section name of key
// characters and dots, lower-cased, then either ']' or whitespace and a
// quoted subsection.
func (p *parser) baseVar() ([]byte, error) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return nil, errBad
		}
		if c == ']' {
			return name, nil
		}
		if isSpace(c) {
			return p.extendedBaseVar(name, c)
		}
		if !isKeyChar(c) && c != '.' {
			return nil, errBad
		}
		name = append(name, lower(c))
	}
}

// extendedBaseVar is git's get_extended_base_var: [section "subsection"],
// where a backslash takes the next byte as it is.
func (p *parser) extendedBaseVar(name []byte, c int) ([]byte, error) {
	for {
		if c == '\n' {
			return nil, errBad
		}
		c = p.next()
		if !isSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, errBad
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return nil, errBad
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return nil, errBad
			}
		}
		name = append(name, byte(c))
	}
	if p.next() != ']' {
		return nil, errBad
	}
	return name, nil
}

// variable is git's get_value: the rest of a name (key characters,
// lower-cased), blanks, then the end of the line (no value) or '=' and a
// value.
func (p *parser) variable(base []byte, first int) (Entry, error) {
	name := []byte{lower(first)}
	var c int
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name = append(name, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := split(string(base) + string(name))
	if c == '\n' {
		e.NoValue = true
		return e, nil
	}
	if c != '=' {
		return Entry{}, errBad
	}
	v, err := p.value()
	if err != nil {
		return Entry{}, err
	}
	if i := strings.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	e.Value = v
	return e, nil
}

// value is git's parse_value: blanks before the value are skipped and
// after it trimmed (outside quotes); '#' or ';' outside quotes starts a
// comment; '"' toggles quoting; a backslash escapes \, ", t, n, b or the
// end of the line (a continuation), and any other escape is an error, as
// is a line that ends inside quotes.
func (p *parser) value() (string, error) {
	var v []byte
	quote, comment := false, false
	trim := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", errBad
			}
			if trim > 0 {
				v = v[:trim]
			}
			return string(v), nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if trim == 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, byte(c))
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = 0
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", errBad
			}
			v = append(v, byte(c))
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, byte(c))
	}
}

// split divides a full variable name as git's parse_config_key does: the
// section up to the first dot, the name after the last, the subsection
// between.
func split(full string) Entry {
	if i := strings.IndexByte(full, 0); i >= 0 {
		full = full[:i]
	}
	first := strings.IndexByte(full, '.')
	last := strings.LastIndexByte(full, '.')
	switch {
	case first < 0:
		return Entry{Name: full, full: full}
	case first == last:
		return Entry{Section: full[:first], Name: full[last+1:], full: full}
	}
	return Entry{Section: full[:first], Subsection: full[first+1 : last], Name: full[last+1:], full: full}
}
