package main

import (
	"fmt"
	"strings"
)

// The table's rows: what serves everything-server to the suite.
var rowNames = [2]string{
	"everything-server directly",
	"`basis serve --http` with everything-server as its one (stdio) MCP server, `--approve allow`",
}

// report is the markdown the run prints: the table (rows: the server
// directly, then through basis; a column per mode), then, for each mode,
// every check basis fails that the server passes directly, and the
// baseline's entries that no longer apply.
func report(rows [2][]Result, regs [][]Regression, baseline map[string]map[string]string) string {
	var b strings.Builder
	b.WriteString("| server under test |")
	for _, m := range modes {
		fmt.Fprintf(&b, " %s (`--requirements %s`) |", m.Label(), m.Requirements)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(modes)))
	b.WriteString("\n")
	for i, name := range rowNames {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range rows[i] {
			fmt.Fprintf(&b, " %d passed, %d failed |", r.Passed(), r.Failed())
		}
		b.WriteString("\n")
	}
	for i, m := range modes {
		fmt.Fprintf(&b, "\n%s: basis fails %d check(s) the server passes directly", m.Label(), len(regs[i]))
		if len(regs[i]) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteString(":\n\n")
		}
		for _, r := range regs[i] {
			fmt.Fprintf(&b, "- `%s` (%s)", r.Check, strings.ToLower(string(r.Basis)))
			if r.Reason != "" {
				fmt.Fprintf(&b, ", in the baseline: %s", r.Reason)
			}
			b.WriteString("\n")
		}
		if s := stale(regs[i], baseline[m.Requirements]); len(s) > 0 {
			fmt.Fprintf(&b, "\nThe baseline lists, under %s, checks basis no longer fails there; remove them: %s\n", m.Requirements, strings.Join(s, ", "))
		}
	}
	return b.String()
}

// clientReport is the markdown of the client run: the table (a row per
// client), then every check basis fails that everything-client passes,
// and the baseline's entries that no longer apply.
func clientReport(rows [2]clientRow, regs []Regression, baseline map[string]string) string {
	var b strings.Builder
	b.WriteString("| client under test (`conformance client --suite all`) | passed | failed | took |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f s |\n", r.Name, r.Result.Passed(), r.Result.Failed(), r.Took.Seconds())
	}
	fmt.Fprintf(&b, "\nbasis fails %d check(s) everything-client passes", len(regs))
	if len(regs) == 0 {
		b.WriteString(".\n")
	} else {
		b.WriteString(":\n\n")
	}
	// The checks an entry ending in * covers show as that one entry.
	grouped := map[string]int{}
	for _, r := range regs {
		if k := wildcardFor(r.Check, baseline); k != "" {
			if grouped[k]++; grouped[k] > 1 {
				continue
			}
		}
	}
	for _, r := range regs {
		k := wildcardFor(r.Check, baseline)
		switch {
		case k == "":
			fmt.Fprintf(&b, "- `%s` (%s)", r.Check, strings.ToLower(string(r.Basis)))
		case grouped[k] > 0:
			fmt.Fprintf(&b, "- `%s` (%d checks)", k, grouped[k])
			grouped[k] = 0
		default:
			continue
		}
		if r.Reason != "" {
			fmt.Fprintf(&b, ", in the baseline: %s", r.Reason)
		}
		b.WriteString("\n")
	}
	if s := stale(regs, baseline); len(s) > 0 {
		fmt.Fprintf(&b, "\nThe client baseline lists checks basis no longer fails; remove them: %s\n", strings.Join(s, ", "))
	}
	return b.String()
}

// wildcardFor is the baseline entry ending in * that covers check, if
// any ("" when none does, or check has an entry of its own).
func wildcardFor(check string, baseline map[string]string) string {
	if _, ok := baseline[check]; ok {
		return ""
	}
	for k := range baseline {
		if strings.HasSuffix(k, "*") && covers(k, check) {
			return k
		}
	}
	return ""
}
