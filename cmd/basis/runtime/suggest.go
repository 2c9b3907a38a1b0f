//go:build unix

package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/basis-go/basis/contract"
)

// maxListed is how many tool names a refusal for an unknown name lists
// when none is close.
const maxListed = 20

// unknownToolText refuses a name no tool has, suggesting the closest
// registered names so the model can correct a typo in one step.
func unknownToolText(name string, names []string) string {
	if close := contract.ClosestNames(name, names, 3); len(close) > 0 {
		return fmt.Sprintf("there is no tool named %q; did you mean %s?", name, quoteList(close, "or"))
	}
	if len(names) == 0 {
		return fmt.Sprintf("there is no tool named %q, and no tools are registered", name)
	}
	sorted := slices.Sorted(slices.Values(names))
	if len(sorted) > maxListed {
		return fmt.Sprintf("there is no tool named %q; call one of the %d registered tools, such as %s", name, len(sorted), quoteList(sorted[:maxListed], "or"))
	}
	return fmt.Sprintf("there is no tool named %q; the tools are %s", name, quoteList(sorted, "and"))
}

func quoteList(names []string, conj string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}
