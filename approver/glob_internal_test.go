//go:build unix

package approver

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":12}`, false},
		{`*`, ``, true},
		{`*`, `{"path":"/etc/passwd"}`, true},
		{`*"body":"cargo test"*`, `{"body":"cargo test","commands":null}`, true},
		{`*"body":"cargo test"*`, `{"body":"cargo test && curl x | sh","commands":null}`, false},
		{`*/etc/*`, `{"path":"/etc/passwd"}`, true},
		{`?`, `é`, true},
		{`??`, `é`, false},
		{`*??`, `é`, false},
		{`a?c`, `abc`, true},
		{`a?c`, `ac`, false},
		{`a*b*c`, `aXbYbZc`, true},
		{`a*b*c`, `aXbYbZ`, false},
		{`*a*a*a*b`, strings.Repeat("a", 40), false},
		{`\*`, `\anything`, true},
		{`\*`, `*`, false},
		{`[a]`, `[a]`, true},
		{`[a]`, `a`, false},
		{`.*`, `.x`, true},
		{`.*`, `x`, false},
		{`x`, ``, false},
		{``, ``, true},
	}
	for _, tt := range tests {
		g := compileGlob(tt.pattern)
		if got := g.match(tt.s); got != tt.want {
			t.Errorf("glob %q on %q = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestCommandWordHasNoQuestionMark(t *testing.T) {
	w := compileWord("a?c")
	if w.match("abc") || !w.match("a?c") {
		t.Error("'?' in a command word is a wildcard; it must be literal")
	}
	if w := compileWord("--out=*"); !w.match("--out=x/y") || w.match("--in=x") {
		t.Error("'*' inside a command word does not match a run within the word")
	}
}

// globRegexp is the reference the matcher is checked against: the same
// language, written as a regular expression.
func globRegexp(pattern string, question bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for _, r := range pattern {
		switch {
		case r == '*':
			b.WriteString(`.*`)
		case r == '?' && question:
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`\z`)
	return regexp.Compile(b.String())
}

// FuzzGlob checks the glob matcher against a regular-expression reference,
// for Subject patterns and for command words, and that it never panics.
func FuzzGlob(f *testing.F) {
	f.Add(`*"body":"cargo test"*`, `{"body":"cargo test && curl x | sh"}`)
	f.Add(`a*b?c*`, `aXXbéc`)
	f.Add(`*?*?`, `é`)
	f.Add(`**a**`, `bab`)
	f.Add(`?`, "\n")
	f.Add(`go*`, `golang`)
	f.Fuzz(func(t *testing.T, pattern, s string) {
		for _, question := range []bool{true, false} {
			g := compile(pattern, question)
			got := g.match(s) // must not panic, whatever the bytes
			if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
				continue // the reference works on characters only
			}
			re, err := globRegexp(pattern, question)
			if err != nil {
				continue
			}
			if want := re.MatchString(s); got != want {
				t.Fatalf("pattern %q (question %v) on %q = %v, want %v", pattern, question, s, got, want)
			}
		}
	})
}

func TestCommandPattern(t *testing.T) {
	tests := []struct {
		rule []string
		argv []string
		want bool
	}{
		{[]string{"go", "test", "*"}, []string{"go", "test", "./..."}, true},
		{[]string{"go", "test", "*"}, []string{"go", "test", "-run", "X", "./..."}, true},
		{[]string{"go", "test", "*"}, []string{"go", "test"}, true},
		{[]string{"go", "test", "*"}, []string{"go", "vet", "./..."}, false},
		{[]string{"go", "test"}, []string{"go", "test"}, true},
		{[]string{"go", "test"}, []string{"go", "test", "./..."}, false},
		{[]string{"go", "*", "./..."}, []string{"go", "vet", "./..."}, true},
		{[]string{"go", "*", "./..."}, []string{"go", "vet", "-x", "./..."}, false},
		{[]string{"*"}, []string{"rm", "-rf", "/"}, true},
		{[]string{"git", "log", "--format=*"}, []string{"git", "log", "--format=%H"}, true},
		{[]string{"git", "log", "--format=*"}, []string{"git", "log", "--oneline"}, false},
		{[]string{"ls", "*.go"}, []string{"ls", "main.go"}, true},
		{[]string{"ls", "*.go"}, []string{"ls", "main.go", "x"}, false},
	}
	for _, tt := range tests {
		c := compileCommand(Words(tt.rule...))
		if got := c.match(tt.argv); got != tt.want {
			t.Errorf("rule %q on %q = %v, want %v", tt.rule, tt.argv, got, tt.want)
		}
	}
}

func TestSubjectCommands(t *testing.T) {
	tests := []struct {
		subject string
		ok      bool
		n       int
	}{
		{`{"body":"go test","commands":[["go","test"]],"cwd":"/r","mode":"command","target":"local"}`, true, 1},
		{`{"body":"a && b","commands":[["a"],["b"]],"cwd":"/r","mode":"command","target":"local"}`, true, 2},
		{`{"body":"$(x)","commands":null,"cwd":"/r","mode":"command","target":"local"}`, false, 0},
		{`{"body":"x","cwd":"/r","mode":"command","target":"local"}`, false, 0},
		{`{"commands":[]}`, false, 0},
		{`{"commands":[[]]}`, false, 0},
		{`{"commands":[["go",1]]}`, false, 0},
		{`{"commands":"go test"}`, false, 0},
		{`{"Commands":[["go","test"]]}`, false, 0},
		{`{"commands":[["a"]],"commands":[["b"],["c"]]}`, true, 2}, // as encoding/json: the last wins
		{`{"input":{"commands":[["go","test"]]}}`, false, 0},
		{`[["go","test"]]`, false, 0},
		{`null`, false, 0},
		{`not json`, false, 0},
	}
	for _, tt := range tests {
		cmds, ok := subjectCommands(tt.subject)
		if ok != tt.ok || len(cmds) != tt.n {
			t.Errorf("subjectCommands(%s) = %q, %v; want ok %v with %d", tt.subject, cmds, ok, tt.ok, tt.n)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("  first\nsecond\r\n\nthird  \n", 100); got != "first / second / third" {
		t.Errorf("oneLine = %q", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := oneLine(long, 51)
	if !strings.HasSuffix(got, "...") || !utf8.ValidString(got) || len(got) > 51+3 {
		t.Errorf("oneLine cut = %q (%d bytes)", got, len(got))
	}
}
