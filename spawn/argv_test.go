package spawn

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitArgv(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"claude -p", []string{"claude", "-p"}},
		{"  agent   --model  x  ", []string{"agent", "--model", "x"}},
		{`agent --prompt 'two words'`, []string{"agent", "--prompt", "two words"}},
		{`agent --prompt "two words"`, []string{"agent", "--prompt", "two words"}},
		{`agent two\ words`, []string{"agent", "two words"}},
		{`"/opt/my tools/agent" -x`, []string{"/opt/my tools/agent", "-x"}},
		{`agent '$HOME' '*' "a'b" 'a"b'`, []string{"agent", "$HOME", "*", "a'b", `a"b`}},
		{`agent \$HOME \* a\~`, []string{"agent", "$HOME", "*", "a~"}},
		{`agent ''`, []string{"agent", ""}},
		{"agent\n-x", []string{"agent", "-x"}},
		{`agent '{a,b}' a=b x~`, []string{"agent", "{a,b}", "a=b", "x~"}},
	} {
		got, err := SplitArgv(tc.in)
		if err != nil {
			t.Errorf("SplitArgv(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SplitArgv(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestSplitArgvRefusesExpansions(t *testing.T) {
	const secret = "s3cr3t-token-value"
	for _, in := range []string{
		"agent $HOME", "agent ${HOME}", `agent "$HOME"`, `agent "${TOKEN:-` + secret + `}"`,
		"agent $(id)", "agent `id`", `agent "$(id)"`, "agent $((1+2))",
		"agent *.go", "agent a?", "agent [ab]", "agent ~/bin", "agent ~",
		"agent {a,b}", "agent x{1..3}", "agent <(id)", "agent @(a|b)",
		`agent $'\n'`, `agent $"x"`,
	} {
		_, err := SplitArgv(in)
		if !errors.Is(err, errArgvExpansion) {
			t.Errorf("SplitArgv(%q) = %v, want an error wrapping errArgvExpansion", in, err)
		}
	}
	for _, in := range []string{
		"agent ; rm -rf /", "agent | tee x", "agent && x", "agent > out", "agent 'unterminated " + secret,
		`agent "unterminated`, "agent &",
	} {
		_, err := SplitArgv(in)
		if err == nil {
			t.Errorf("SplitArgv(%q) = nil error, want one: it is not a list of words", in)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "rm -rf") {
			t.Errorf("SplitArgv(%q): the error quotes the input: %v", in, err)
		}
	}
}

func FuzzSplitArgv(f *testing.F) {
	for _, s := range []string{"claude -p", `a 'b c' "d e" f\ g`, "$HOME", "a;b", "{a,b}", "~", `"$(x)"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitArgv(s)
		if err != nil {
			return
		}
		// What splits without error must be a plain list of words: joining
		// them quoted and splitting again gives them back.
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := SplitArgv(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting %q: %v", quoted, err)
		}
		if diff := cmp.Diff(words, again); diff != "" && len(words) > 0 {
			t.Fatalf("round trip of %q (-first +second):\n%s", s, diff)
		}
	})
}
