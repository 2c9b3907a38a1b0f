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

// closestNames returns up to n names within a small edit distance of
// name, closest first, ties in name order.
func closestNames(name string, names []string, n int) []string {
	type scored struct {
		name string
		dist int
	}
	limit := max(2, len(name)/3)
	var found []scored
	for _, candidate := range names {
		d := editDistance(strings.ToLower(name), strings.ToLower(candidate))
		if d <= limit || strings.Contains(strings.ToLower(candidate), strings.ToLower(name)) && len(name) >= 3 {
			found = append(found, scored{candidate, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for i := 0; i < len(found) && i < n; i++ {
		out = append(out, found[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (tool names are ASCII).
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
