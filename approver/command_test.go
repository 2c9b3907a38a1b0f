//go:build unix

package approver_test

import (
	"errors"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []approver.CommandWord
		out  string // FormatCommand of the result
	}{
		{"go test *", approver.Words("go", "test", "*"), "go test *"},
		{"git {push,fetch} *", []approver.CommandWord{{"git"}, {"push", "fetch"}, {"*"}}, "git {push,fetch} *"},
		{"  git   {push,fetch}  ", []approver.CommandWord{{"git"}, {"push", "fetch"}}, "git {push,fetch}"},
		{"find . -exec rm '{}' ';'", approver.Words("find", ".", "-exec", "rm", "{}", ";"), "find . -exec rm '{}' ';'"},
		{`git commit -m "it's done"`, approver.Words("git", "commit", "-m", "it's done"), `git commit -m 'it'\''s done'`},
		{`echo a\ b`, approver.Words("echo", "a b"), "echo 'a b'"},
		{"git {'push all',fetch}", []approver.CommandWord{{"git"}, {"push all", "fetch"}}, "git {'push all',fetch}"},
		{"git '{push,fetch}'", approver.Words("git", "{push,fetch}"), "git '{push,fetch}'"},
		{"go --format=* test", approver.Words("go", "--format=*", "test"), "go --format=* test"},
		{"{go,gofmt} *", []approver.CommandWord{{"go", "gofmt"}, {"*"}}, "{go,gofmt} *"},
		{`say "\$HOME"`, approver.Words("say", "$HOME"), "say '$HOME'"},
	}
	for _, tt := range tests {
		got, err := approver.ParseCommand(tt.in)
		if err != nil {
			t.Errorf("ParseCommand(%s): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCommand(%s) (-want +got):\n%s", tt.in, diff)
		}
		if out := approver.FormatCommand(got); out != tt.out {
			t.Errorf("FormatCommand = %s, want %s", out, tt.out)
		}
		again, err := approver.ParseCommand(approver.FormatCommand(got))
		if diff := cmp.Diff(got, again); err != nil || diff != "" {
			t.Errorf("round trip of %s: %v (-first +second):\n%s", tt.in, err, diff)
		}
	}
}

func TestParseCommandErrors(t *testing.T) {
	tests := map[string]string{
		"":               "invalid command rule: it has no words; write at least the program, such as go test *",
		"git {push,}":    "invalid command rule: word 2: an alternative in braces is empty; write {a,b} or quote the braces to match them literally",
		"git {}":         "invalid command rule: word 2: an alternative in braces is empty; write {a,b} or quote the braces to match them literally",
		"git {a,{b,c}}":  "invalid command rule: word 2: braces do not nest; quote a literal brace",
		"git --x={a,b}":  "invalid command rule: word 2: braces list alternatives only as a whole word, such as {push,fetch}; quote a literal brace",
		"go test | tail": `invalid command rule: '|' would be read by a shell; a command rule or example is one simple command, so quote it to mean the character itself`,
		"go test; rm":    `invalid command rule: ';' would be read by a shell; a command rule or example is one simple command, so quote it to mean the character itself`,
		"echo $HOME":     `invalid command rule: '$' would be read by a shell; a command rule or example is one simple command, so quote it to mean the character itself`,
		`echo "$HOME"`:   `invalid command rule: '$' inside double quotes would be expanded by a shell; use single quotes`,
		"echo 'unclosed": "invalid command rule: a single quote is not closed",
		`echo "unclosed`: "invalid command rule: a double quote is not closed",
		`echo trailing\`: "invalid command rule: a backslash ends the text",
	}
	for in, want := range tests {
		_, err := approver.ParseCommand(in)
		if !errors.Is(err, approver.ErrCommandSyntax) || err.Error() != want {
			t.Errorf("ParseCommand(%q) = %v\nwant %s", in, err, want)
		}
	}
}

func TestSplitCommandLine(t *testing.T) {
	tests := map[string][]string{
		"go test ./...":                 {"go", "test", "./..."},
		"git push 'a b' \"c d\" e\\ f":  {"git", "push", "a b", "c d", "e f"},
		"find . -name {} -o -name '*x'": {"find", ".", "-name", "{}", "-o", "-name", "*x"},
	}
	for in, want := range tests {
		got, err := approver.SplitCommandLine(in)
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("SplitCommandLine(%s): %v (-want +got):\n%s", in, err, diff)
		}
		if back, err := approver.SplitCommandLine(approver.FormatCommandLine(got)); err != nil || !cmp.Equal(got, back) {
			t.Errorf("FormatCommandLine does not read back: %s -> %q, %v", approver.FormatCommandLine(got), back, err)
		}
	}
}

// FuzzParseCommand: the CLI's command-rule parser never panics, what it
// accepts is a valid pattern that FormatCommand writes back to the same
// words, and SplitCommandLine agrees with FormatCommandLine.
func FuzzParseCommand(f *testing.F) {
	for _, seed := range []string{"go test *", "git {push,fetch} *", `git commit -m "x y"`, "find . -exec rm '{}' ';'", "{a,b", `a\`, "go test | tail"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := approver.ParseCommand(s)
		if err == nil {
			r := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: words}
			if verr := r.Validate(); verr != nil {
				t.Fatalf("ParseCommand(%q) accepted an invalid pattern %q: %v", s, words, verr)
			}
			again, err := approver.ParseCommand(approver.FormatCommand(words))
			if err != nil || !cmp.Equal(words, again) {
				t.Fatalf("round trip of %q: %q -> %q, %v", s, approver.FormatCommand(words), again, err)
			}
		} else if !errors.Is(err, approver.ErrCommandSyntax) {
			t.Fatalf("error %v does not wrap ErrCommandSyntax", err)
		}
		argv, err := approver.SplitCommandLine(s)
		if err != nil {
			return
		}
		back, err := approver.SplitCommandLine(approver.FormatCommandLine(argv))
		if err != nil || !cmp.Equal(argv, back) && len(argv) > 0 {
			t.Fatalf("SplitCommandLine(%q) = %q; formatted %q reads back as %q, %v", s, argv, approver.FormatCommandLine(argv), back, err)
		}
	})
}

func TestCommandRuleAlternativesMatch(t *testing.T) {
	r := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: []approver.CommandWord{{"git"}, {"push", "fetch"}, {"*"}}, Decision: approver.RuleAllow,
		Match:    []string{"git push", "git fetch origin", "git push --force origin main"},
		NotMatch: []string{"git status", "git pushx", "gitx push", "git"}}
	if err := r.CheckExamples(); err != nil {
		t.Error(err)
	}
	// '*' inside an alternative is a glob within the word.
	r = approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: []approver.CommandWord{{"go"}, {"test", "vet", "tool*"}}, Decision: approver.RuleAllow,
		Match:    []string{"go test", "go vet", "go tool", "go toolchain"},
		NotMatch: []string{"go test ./...", "go build"}}
	if err := r.CheckExamples(); err != nil {
		t.Error(err)
	}
}
