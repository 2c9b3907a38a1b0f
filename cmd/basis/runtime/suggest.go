//go:build unix

package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// maxListed is how many tool names a refusal for an unknown name lists
// when none is close.
const maxListed = 20

// unknownToolText refuses a name no tool has, suggesting the closest
// registered names so the model can correct a typo in one step.
func unknownToolText(name string, names []string) string {
	if close := closestNames(name, names, 3); len(close) > 0 {
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

// closestNames returns up to n of candidates that look like a misspelling
// of name, closest first (ties in candidate order): within a small edit
// distance ignoring case, or containing name when it has three characters
// or more. A private copy of configfile.Suggest, so the runtime's "did you
// mean" for tool names needs no config-file reader; a test keeps the two
// in agreement.
func closestNames(name string, candidates []string, n int) []string {
	type scored struct {
		name string
		dist int
	}
	lower := strings.ToLower(name)
	limit := max(2, len(name)/3)
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if d := editDistance(lower, lc); d <= limit || len(name) >= 3 && strings.Contains(lc, lower) {
			found = append(found, scored{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.dist - b.dist })
	out := make([]string, 0, min(n, len(found)))
	for i := 0; i < len(found) && i < n; i++ {
		out = append(out, found[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
