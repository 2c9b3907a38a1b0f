//go:build unix

package approver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// commandPattern is a compiled Rule.Command.
type commandPattern struct {
	// words holds, for each word, the globs of its alternatives.
	words [][]glob
	// rest: the rule ended in a lone "*", which matches any number of
	// further words (none included).
	rest bool
}

func compileCommand(words []CommandWord) commandPattern {
	var c commandPattern
	if n := len(words); n > 0 && len(words[n-1]) == 1 && words[n-1][0] == "*" {
		c.rest = true
		words = words[:n-1]
	}
	c.words = make([][]glob, len(words))
	for i, w := range words {
		c.words[i] = make([]glob, len(w))
		for j, alt := range w {
			c.words[i][j] = compileWord(alt)
		}
	}
	return c
}

// match reports whether argv, one simple command, matches the pattern.
func (c *commandPattern) match(argv []string) bool {
	if len(argv) < len(c.words) || !c.rest && len(argv) != len(c.words) {
		return false
	}
	for i, alts := range c.words {
		matched := false
		for j := range alts {
			if alts[j].match(argv[i]) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

// subjectCommands returns the Subject's top-level "commands" list: the
// simple commands a tool found in what it is about to run. ok is false when
// there is no usable list: the key is absent or null (the tool could not
// analyse the command), the list is empty, an entry is not a non-empty list
// of strings, or the Subject is not a JSON object. Command rules match
// nothing then.
func subjectCommands(subject string) (commands [][]string, ok bool) {
	// A map, not a struct: struct fields would also take "Commands".
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(subject), &top) != nil {
		return nil, false
	}
	raw, found := top["commands"]
	if !found || string(raw) == "null" || json.Unmarshal(raw, &commands) != nil || len(commands) == 0 {
		return nil, false
	}
	for _, argv := range commands {
		if len(argv) == 0 {
			return nil, false
		}
	}
	return commands, true
}

// errCommandSyntax is wrapped by the errors [ParseCommand] and
// [splitCommandLine] return.
var errCommandSyntax = errors.New("invalid command rule")

// ParseCommand reads a command pattern as the CLI takes it: words split as
// sh splits them, a whole unquoted brace group listing alternatives
// ("git {push,fetch} *").
func ParseCommand(s string) ([]CommandWord, error) {
	words, err := splitShellWords(s)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("%w: it has no words; write at least the program, such as go test *", errCommandSyntax)
	}
	out := make([]CommandWord, 0, len(words))
	for i, w := range words {
		cw, err := w.commandWord()
		if err != nil {
			return nil, fmt.Errorf("%w: word %d: %s", errCommandSyntax, i+1, err)
		}
		out = append(out, cw)
	}
	return out, nil
}

// splitCommandLine splits one simple command line into its words as a
// POSIX shell would, without expanding anything: quotes and backslashes
// work as in sh, braces are literal. It is how a command rule's examples
// are read. An unquoted | & ; < > ( ) $ ` is an error: an example is one
// simple command with nothing for a shell to interpret.
func splitCommandLine(line string) ([]string, error) {
	words, err := splitShellWords(line)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.text()
	}
	return out, nil
}

// FormatCommand writes a command pattern in the form [ParseCommand] reads.
func FormatCommand(words []CommandWord) string {
	parts := make([]string, len(words))
	for i, w := range words {
		if len(w) == 1 {
			parts[i] = quotePatternWord(w[0])
			continue
		}
		alts := make([]string, len(w))
		for j, alt := range w {
			alts[j] = quotePatternWord(alt)
		}
		parts[i] = "{" + strings.Join(alts, ",") + "}"
	}
	return strings.Join(parts, " ")
}

// quotePatternWord quotes a word of a command pattern when a shell or
// ParseCommand would read it otherwise; '*' needs no quoting, since it
// means the same quoted or not.
func quotePatternWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:+@%*?^~") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// shellWord is a word as split, each byte marked quoted or not.
type shellWord struct {
	b      []byte
	quoted []bool
}

func (w *shellWord) add(c byte, quoted bool) {
	w.b = append(w.b, c)
	w.quoted = append(w.quoted, quoted)
}

func (w *shellWord) text() string { return string(w.b) }

// commandWord reads a split word as a pattern word: a whole unquoted
// brace group is a list of alternatives; any other unquoted brace, or a
// comma inside a group, is an error that says to quote it.
func (w *shellWord) commandWord() (CommandWord, error) {
	n := len(w.b)
	if n >= 2 && w.b[0] == '{' && !w.quoted[0] && w.b[n-1] == '}' && !w.quoted[n-1] {
		var alts CommandWord
		var cur []byte
		for i := 1; i < n-1; i++ {
			c, q := w.b[i], w.quoted[i]
			switch {
			case !q && c == ',':
				alts = append(alts, string(cur))
				cur = nil
			case !q && (c == '{' || c == '}'):
				return nil, errors.New("braces do not nest; quote a literal brace")
			default:
				cur = append(cur, c)
			}
		}
		alts = append(alts, string(cur))
		for _, a := range alts {
			if a == "" {
				return nil, errors.New("an alternative in braces is empty; write {a,b} or quote the braces to match them literally")
			}
		}
		return alts, nil
	}
	if len(w.b) == 0 {
		return nil, errors.New("it is empty; use * for any word")
	}
	for i, c := range w.b {
		if !w.quoted[i] && (c == '{' || c == '}') {
			return nil, errors.New("braces list alternatives only as a whole word, such as {push,fetch}; quote a literal brace")
		}
	}
	return CommandWord{w.text()}, nil
}

// splitShellWords splits s as sh splits words, without expansion.
func splitShellWords(s string) ([]*shellWord, error) {
	var words []*shellWord
	var cur *shellWord
	start := func() {
		if cur == nil {
			cur = &shellWord{}
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if cur != nil {
				words = append(words, cur)
				cur = nil
			}
		case c == '\'':
			start()
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("%w: a single quote is not closed", errCommandSyntax)
			}
			for j := i + 1; j <= i+end; j++ {
				cur.add(s[j], true)
			}
			i += end + 1
		case c == '"':
			start()
			closed := false
			for i++; i < len(s); i++ {
				c := s[i]
				if c == '"' {
					closed = true
					break
				}
				if c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					c = s[i]
				} else if c == '$' || c == '`' {
					return nil, fmt.Errorf("%w: %q inside double quotes would be expanded by a shell; use single quotes", errCommandSyntax, c)
				}
				cur.add(c, true)
			}
			if !closed {
				return nil, fmt.Errorf("%w: a double quote is not closed", errCommandSyntax)
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("%w: a backslash ends the text", errCommandSyntax)
			}
			start()
			i++
			cur.add(s[i], true)
		case strings.IndexByte("|&;<>()$`", c) >= 0:
			return nil, fmt.Errorf("%w: %q would be read by a shell; a command rule or example is one simple command, so quote it to mean the character itself", errCommandSyntax, c)
		default:
			start()
			cur.add(c, false)
		}
	}
	if cur != nil {
		words = append(words, cur)
	}
	return words, nil
}
