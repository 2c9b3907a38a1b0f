package configfile

import (
	"slices"
	"strings"
)

// Suggest returns up to n of candidates that look like a misspelling of
// name, closest first (ties in candidate order): those within a small edit
// distance, ignoring case, and those that contain name when it has three
// characters or more. It is the config readers' "did you mean" (an unknown
// key, server type or flag), so a typo gets the same help in every file.
func Suggest(name string, candidates []string, n int) []string {
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
