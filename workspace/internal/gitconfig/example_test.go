package gitconfig_test

import (
	"fmt"

	"github.com/basis-go/basis/workspace/internal/gitconfig"
)

// A repository's config names a program git runs on every status; the
// setting is reported by key and line, never by its value.
func ExampleWhat() {
	entries, err := gitconfig.Parse([]byte("[core]\n\tbare = false\n\tfsmonitor = .git/hooks/query-watchman\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		if what := gitconfig.What(e); what != "" {
			fmt.Printf("line %d: %s %s\n", e.Line, e.Key(), what)
		}
	}
	// Output:
	// line 3: core.fsmonitor names a program git runs
}
