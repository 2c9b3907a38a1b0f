package childenv_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/basis-go/basis/contract/childenv"
)

// FuzzMatch holds Match to the meaning its doc gives: a * matches any run
// of characters, everything else itself. The reference is a regular
// expression built from the same pattern.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"GITHUB_*", "GITHUB_TOKEN"}, {"*", ""}, {"*_KEY", "API_KEY"}, {"a*a", "a"},
		{"A*B*C", "ABC"}, {"**", "x"}, {"AWS_PROFILE", "AWS_PROFILE"}, {"x*", "y"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			t.Skip("the reference works on text; variable names are ASCII")
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(`^(?s:` + strings.Join(parts, ".*") + `)$`)
		if got, want := childenv.Match(pattern, name), re.MatchString(name); got != want {
			t.Errorf("Match(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	})
}
