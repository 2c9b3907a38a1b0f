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
