//go:build unix

package approver

import (
	"slices"
	"strings"
)

// proposeCommand returns the narrowest command pattern worth remembering
// for argv, one simple command: the program, then its subcommand when the
// second word looks like one (a lower-case word such as test, push or
// run), then "*" for whatever follows. So "go test ./pkg/..." gives
// go test *, "cargo build --release" cargo build *, "ls -la" ls * and
// "ls" ls.
//
// For a program that runs programs or code, or destroys data
// ([exactReason]: find, env, sh, python3, git, rm, …) it is the exact
// command line: find * would also allow find . -exec sh -c '…' \;. When
// the exact line holds a '*' — which a command pattern reads as any run
// of characters, so no command rule matches only it — or an empty word,
// which a rule cannot hold, there is no proposal: proposeCommand returns
// nil, and an "always" answer remembers the exact call instead.
func proposeCommand(argv []string) []CommandWord {
	if len(argv) == 0 {
		return nil
	}
	if exactReason(argv) != "" {
		if slices.ContainsFunc(argv, unrepresentable) {
			return nil
		}
		return Words(argv...)
	}
	keep := 1
	if len(argv) > 1 && looksLikeSubcommand(argv[1]) {
		keep = 2
	}
	if slices.ContainsFunc(argv[:keep], unrepresentable) {
		return nil
	}
	words := Words(argv[:keep]...)
	if len(argv) > keep {
		words = append(words, CommandWord{"*"})
	}
	return words
}

// unrepresentable reports whether no command-rule word matches exactly w:
// '*' is any run of characters there, and a word may not be empty.
func unrepresentable(w string) bool { return w == "" || strings.Contains(w, "*") }

// looksLikeSubcommand: a lower-case word of letters, digits, '-' and '_'
// that starts with a letter — not a flag, a path or an assignment.
func looksLikeSubcommand(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	return strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}

// formatCommandLine writes argv as one command line that
// [splitCommandLine] reads back: each word quoted for a POSIX shell when
// it needs to be.
func formatCommandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, w := range argv {
		parts[i] = shellQuote(w)
	}
	return strings.Join(parts, " ")
}

// propose makes the rules an approver may offer as "always" for a command
// line: for each command no allow rule covers, the narrowest pattern
// ([proposeCommand]) with the command's line as its first Match example;
// commands that give the same pattern share one rule. When one of them
// has no pattern (an exact line holding '*'), there is no proposal at all:
// "always" then remembers the exact call, never less than was asked
// about. The terminal, an MCP client's form, a hook and Explain all
// offer what this returns.
func (g *Gate) propose(req Request, subject *callSubject) []Rule {
	if req.Source == "" || !validTool(req.Tool) {
		return nil
	}
	commands, ok := subject.Commands()
	if !ok {
		return nil
	}
	var out []Rule
	for _, argv := range g.uncovered(req.Tool, req.Source, g.defs.of(req.Definition), commands) {
		words := proposeCommand(argv)
		if words == nil {
			return nil
		}
		line := formatCommandLine(argv)
		i := slices.IndexFunc(out, func(r Rule) bool { return FormatCommand(r.Command) == FormatCommand(words) })
		if i >= 0 {
			if !slices.Contains(out[i].Match, line) {
				out[i].Match = append(out[i].Match, line)
			}
			continue
		}
		out = append(out, Rule{Tool: req.Tool, Source: req.Source, Command: words, Decision: RuleAllow, Match: []string{line}})
	}
	return out
}
