//go:build unix

package approver

import (
	"os"
	"strings"
	"testing"
)

// TestExactProgramsAreDocumented: every program and subcommand proposed
// exactly is in the rules guide's table, so the list people read is the list
// the code keeps.
func TestExactProgramsAreDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(data), "**Exact for programs that run programs")
	end := strings.Index(string(data), "A word holding `*` cannot be proposed exactly")
	if start < 0 || end < start {
		t.Fatal("the rules guide (docs/rules.md) has no section on exact proposals")
	}
	doc := strings.ToLower(string(data[start:end]))
	for name := range exactPrograms {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("%s is proposed exactly but not listed in docs/rules.md", name)
		}
	}
	for name, subs := range exactSubcommands {
		if !strings.Contains(doc, "`"+name+" "+strings.Join(subs, `\|`)+"`") {
			t.Errorf("%s %s: not listed in docs/rules.md as `%s %s`", name, subs, name, strings.Join(subs, `\|`))
		}
	}
}
