//go:build unix

package spawn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/basis-go/basis/spawn"
)

// analysable are bodies whose simple commands can be listed, with the exact
// argv each program receives.
var analysable = []struct {
	body string
	want [][]string
}{
	{"go test ./...", [][]string{{"go", "test", "./..."}}},
	{"go test ./... && go vet ./...", [][]string{{"go", "test", "./..."}, {"go", "vet", "./..."}}},
	{"make build || echo failed", [][]string{{"make", "build"}, {"echo", "failed"}}},
	{"cd sub; go test", [][]string{{"cd", "sub"}, {"go", "test"}}},
	{"git log --oneline | head -5", [][]string{{"git", "log", "--oneline"}, {"head", "-5"}}},
	{"a | b | c", [][]string{{"a"}, {"b"}, {"c"}}},
	{"gofmt -l .\ngo vet ./...", [][]string{{"gofmt", "-l", "."}, {"go", "vet", "./..."}}},
	{"go test \\\n  ./...", [][]string{{"go", "test", "./..."}}},
	{`echo 'a b' "c d" e\ f`, [][]string{{"echo", "a b", "c d", "e f"}}},
	{`grep -rn "TODO" .`, [][]string{{"grep", "-rn", "TODO", "."}}},
	{`echo "it's"`, [][]string{{"echo", "it's"}}},
	{`echo "a\"b" 'c\d'`, [][]string{{"echo", `a"b`, `c\d`}}},
	{`echo "\$HOME" \$HOME`, [][]string{{"echo", "$HOME", "$HOME"}}},
	{`echo ''`, [][]string{{"echo", ""}}},
	{`printf '%s\n' x`, [][]string{{"printf", `%s\n`, "x"}}},
	{`go test -run 'TestX.*'`, [][]string{{"go", "test", "-run", "TestX.*"}}},
	{`echo '*' a\*b "?"`, [][]string{{"echo", "*", "a*b", "?"}}},
	{`sh -c 'echo out; exit 4'`, [][]string{{"sh", "-c", "echo out; exit 4"}}},
	{`git log HEAD~3`, [][]string{{"git", "log", "HEAD~3"}}},
	{`find . -name x -exec rm {} \;`, [][]string{{"find", ".", "-name", "x", "-exec", "rm", "{}", ";"}}},
	{`[ -f go.mod ] && go test`, [][]string{{"[", "-f", "go.mod", "]"}, {"go", "test"}}},
	{`! grep -q x file`, [][]string{{"grep", "-q", "x", "file"}}},
	{`ls # a comment`, [][]string{{"ls"}}},
	{`go build ./... >/dev/null 2>&1`, [][]string{{"go", "build", "./..."}}},
	{`echo done >&2`, [][]string{{"echo", "done"}}},
	{`go test ./... 2>&1 | tee /dev/null`, [][]string{{"go", "test", "./..."}, {"tee", "/dev/null"}}},
	{`cat </dev/null; exec_tool <&-`, [][]string{{"cat"}, {"exec_tool"}}},
	{`./scripts/check.sh --fast`, [][]string{{"./scripts/check.sh", "--fast"}}},
	{`/usr/bin/env ls`, [][]string{{"/usr/bin/env", "ls"}}},
	{`x --flag=value -- "a=b"`, [][]string{{"x", "--flag=value", "--", "a=b"}}},
	{`echo "multi
line"`, [][]string{{"echo", "multi\nline"}}},
	{`echo [`, [][]string{{"echo", "["}}},
	{`'go' "test"`, [][]string{{"go", "test"}}},
	// Escapes both shells remove: the argv holds the character alone.
	{`ls \{`, [][]string{{"ls", "{"}}},
	{`echo \{a,b\} \~ a\*`, [][]string{{"echo", "{a,b}", "~", "a*"}}},
	{`echo "a\b" "\$" "\\"`, [][]string{{"echo", `a\b`, "$", `\`}}},
	{`echo }{ '{'a,b'}' x~y a:b`, [][]string{{"echo", "}{", "{a,b}", "x~y", "a:b"}}},
	{`ls 2>/dev/null 1>&2`, [][]string{{"ls"}}},
	{`printf '%s' x`, [][]string{{"printf", "%s", "x"}}},
	{`test -f 'a[1]'`, [][]string{{"test", "-f", "a[1]"}}},
	{`grep 'a[$]' file`, [][]string{{"grep", "a[$]", "file"}}},
}

// unanalysable are bodies whose commands cannot be listed statically, with
// a word of the reason.
var unanalysable = []struct {
	body string
	why  string
}{
	{`echo $(whoami)`, "command substitution"},
	{"echo `id`", "command substitution"},
	{`echo "$(id)"`, "command substitution"},
	{`$CMD arg`, "parameter expansion"},
	{`echo $HOME`, "parameter expansion"},
	{`echo ${HOME}`, "parameter expansion"},
	{`echo "$x"`, "parameter expansion"},
	{`go test ./... "$@"`, "parameter expansion"},
	{`echo $((1+2))`, "arithmetic expansion"},
	{`diff <(ls a) <(ls b)`, "does not parse"},
	{`go test > out.txt`, "redirects > a file"},
	{`go test >> log`, "redirects >> a file"},
	{`sort < in.txt`, "redirects < a file"},
	{`ls 2>&1 > out`, "redirects > a file"},
	{`ls >&file`, "redirects >& a file"},
	{`ls 2>"$LOG"`, "parameter expansion"},
	{`> out`, "no command"},
	{"cat <<EOF\nhi\nEOF", "here-document"},
	{`(cd sub && make)`, "subshell"},
	{`{ a; b; }`, "block"},
	{`f() { ls; }; f`, "function"},
	{`if true; then ls; fi`, "an if"},
	{`for f in a b; do echo x; done`, "for loop"},
	{`while true; do :; done`, "while"},
	{`case x in x) ls;; esac`, "a case"},
	{`sleep 30 &`, "background"},
	{`X=1 go test`, "assigns a variable"},
	{`PATH=/tmp/evil:/bin go test`, "assigns a variable"},
	{`eval "rm -rf /"`, `builtin "eval"`},
	{`source ./env.sh`, `builtin "source"`},
	{`. ./env.sh && make`, `builtin "."`},
	{`exec ls`, `builtin "exec"`},
	{`'eval' x`, `builtin "eval"`},
	{`\eval x`, `builtin "eval"`},
	{`command eval x`, `builtin "command"`},
	{`time eval x`, `keyword of bash`},
	{`export PATH=/tmp`, `builtin "export"`},
	{`trap 'curl x | sh' EXIT; go test`, `builtin "trap"`},
	{`alias go=rm; go test`, `builtin "alias"`},
	{`ls *.go`, "glob"},
	{`ls ?`, "glob"},
	{`ls [ab]`, "glob"},
	{`ls ~/x`, "~ at its start"},
	{`cat ~root/x`, "~ at its start"},
	// Forms dash and bash read differently.
	{`x+=1 touch PWNED`, "holds an ="},
	{`'x+=1' touch PWNED`, "holds an ="},
	{`a[1]=x ls`, "glob"},
	{`10>/dev/null ls`, "descriptor 10"},
	{`ls 10>/dev/null`, "descriptor 10"},
	{`ls 2>&10`, "redirects >& a file"},
	{`echo a=~/x`, "after = or :"},
	{`echo a:~/x`, "after = or :"},
	{`echo {"a",b}`, "brace expansion"},
	{`echo x{}y{a,b}`, "brace expansion"},
	{`echo $[1+1]`, "$"},
	{`echo a\`, "ends with a backslash"},
	{`[[ -f x ]]`, "keyword of bash"},
	{`time ls`, "keyword of bash"},
	{`coproc ls`, "keyword of bash"},
	{`'[[' -f x ']]'`, "keyword of bash"},
	{`cat <<<x`, "does not parse"},
	{`a=(1 2) ls`, "does not parse"},
	{`echo @(a|b)`, "does not parse"},
	{`printf -v PATH /tmp`, "printf -v"},
	{`wait -p PATH`, "wait -p"},
	{`test -v 'a[$(touch PWNED)]'`, "array subscript"},
	{"kill -l 'a[`id`]'", "array subscript"},
	{`jobs -x touch PWNED`, `builtin "jobs"`},
	{`compgen -C 'touch PWNED' x`, `builtin "compgen"`},
	{`fc -s`, `builtin "fc"`},
	{`echo {a,b}`, "brace expansion"},
	{`echo x{1..3}`, "brace expansion"},
	{`echo $'\x41'`, "$"},
	{`echo $"x"`, "$"},
	{`echo $`, "$"},
	{`go test &&`, "does not parse"},
	{`ls |& cat`, "does not parse"},
	{`ls &> f`, "does not parse"},
	{`function f { ls; }`, "does not parse"},
	{`# only a comment`, "runs no command"},
	{"echo 'a\r\r\n'", "carriage return"},
	{"ls\r\n", "carriage return"},
	{"echo a\x00b", "NUL byte"},
	// mvdan.cc/sh v3.13 takes U+0080 for the end of input: without the
	// guard, "go test" would be listed and curl would run unlisted.
	{"go test \u0080\ncurl x | sh", "U+0080"},
	{"go test # \u0080\ncurl x | sh", "U+0080"},
	{"echo '\u0081'; curl x", "U+0081"},
	{"ls \\\n", "stopped before the end"},
	{`((x++))`, "subshell"},
}

func TestAnalyzeCommands(t *testing.T) {
	if n := len(analysable) + len(unanalysable); n < 40 {
		t.Fatalf("only %d bodies; the table must hold at least 40", n)
	}
	for _, tt := range analysable {
		got, err := spawn.AnalyzeCommands(tt.body)
		if err != nil {
			t.Errorf("AnalyzeCommands(%q): %v", tt.body, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("AnalyzeCommands(%q) (-want +got):\n%s", tt.body, diff)
		}
	}
	for _, tt := range unanalysable {
		got, err := spawn.AnalyzeCommands(tt.body)
		if !errors.As(err, new(*spawn.UnanalysableError)) || got != nil {
			t.Errorf("AnalyzeCommands(%q) = %q, %v; want nil and an *UnanalysableError", tt.body, got, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.why) {
			t.Errorf("AnalyzeCommands(%q) error %q does not say %q", tt.body, err, tt.why)
		}
	}
}

// quoteWord single-quotes s for a POSIX shell.
func quoteWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// FuzzAnalyzeCommands checks that the analysis never panics, and that a
// listing is faithful: writing every argv word back single-quoted, one
// command a line, analyses to the same list.
func FuzzAnalyzeCommands(f *testing.F) {
	for _, tt := range analysable {
		f.Add(tt.body)
	}
	for _, tt := range unanalysable {
		f.Add(tt.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		commands, err := spawn.AnalyzeCommands(body)
		if err != nil {
			if commands != nil || !errors.As(err, new(*spawn.UnanalysableError)) {
				t.Fatalf("AnalyzeCommands(%q) = %q, %v", body, commands, err)
			}
			return
		}
		if len(commands) == 0 {
			t.Fatalf("AnalyzeCommands(%q) listed no command without an error", body)
		}
		var lines []string
		for _, argv := range commands {
			if len(argv) == 0 {
				t.Fatalf("AnalyzeCommands(%q) listed an empty command", body)
			}
			var words []string
			for _, w := range argv {
				if strings.IndexByte(w, 0) >= 0 {
					return // a NUL cannot be written back; Parse refuses it anyway
				}
				words = append(words, quoteWord(w))
			}
			lines = append(lines, strings.Join(words, " "))
		}
		again, err := spawn.AnalyzeCommands(strings.Join(lines, "\n"))
		if err != nil {
			t.Fatalf("AnalyzeCommands(%q) = %q, but written back it is unanalysable: %v", body, commands, err)
		}
		if diff := cmp.Diff(commands, again); diff != "" {
			t.Fatalf("AnalyzeCommands(%q) written back differs (-first +again):\n%s", body, diff)
		}
	})
}
