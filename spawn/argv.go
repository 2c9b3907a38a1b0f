package spawn

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// errArgvExpansion is wrapped by the error for an argv string that asks
// for an expansion ($VAR, $(cmd), a glob, ~, {a,b}): words are split as
// a shell would but never expanded, so what runs is exactly what was
// written.
var errArgvExpansion = errors.New("expansions are not performed")

// SplitArgv splits a command as an operator writes it (a
// [CommandDelegator]'s Argv, a hook approver's: basis's --delegate and
// --approve hook:ARGV) into words as a POSIX shell splits a command's
// arguments: blanks separate words, quotes and backslashes keep them
// together. Nothing is run through a shell and nothing is expanded; a
// word a shell would expand is an error, so "$HOME/bin/agent" cannot mean
// one thing here and another in a terminal. A blank string is no words.
func SplitArgv(s string) ([]string, error) {
	var words []string
	p := syntax.NewParser()
	for w, err := range p.WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return nil, fmt.Errorf("cannot split %s into words: %v", describeArgv(s), err)
		}
		if err := argvLiteral(w); err != nil {
			return nil, fmt.Errorf("word %d of %s: %w", len(words)+1, describeArgv(s), err)
		}
		// With nothing left to expand, this is quote removal only: the
		// environment is empty and globbing is off (no ReadDir).
		fields, err := expand.Fields(&expand.Config{Env: expand.ListEnviron()}, w)
		if err != nil || len(fields) != 1 {
			return nil, fmt.Errorf("word %d of %s cannot be read as one word", len(words)+1, describeArgv(s))
		}
		words = append(words, fields[0])
	}
	return words, nil
}

// describeArgv names an argv string in an error by its size only: it may
// hold a credential (a hook's token argument).
func describeArgv(s string) string {
	return fmt.Sprintf("the %d-character command", len([]rune(s)))
}

// argvLiteral refuses every part of a word that a shell would expand.
func argvLiteral(w *syntax.Word) error {
	if syntax.SplitBraces(w) {
		return fmt.Errorf("a brace expansion {…}: %w; quote the braces", errArgvExpansion)
	}
	for i, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			if pattern.HasMeta(part.Value, 0) {
				return fmt.Errorf("a glob (*, ? or […]): %w; quote it", errArgvExpansion)
			}
			if i == 0 && strings.HasPrefix(part.Value, "~") {
				return fmt.Errorf("a ~ for a home directory: %w; write the path out", errArgvExpansion)
			}
		case *syntax.SglQuoted:
			if part.Dollar {
				return fmt.Errorf("a $'…' string: %w; use '…'", errArgvExpansion)
			}
		case *syntax.DblQuoted:
			if part.Dollar {
				return fmt.Errorf("a $\"…\" string: %w; use \"…\"", errArgvExpansion)
			}
			for _, inner := range part.Parts {
				if _, ok := inner.(*syntax.Lit); !ok {
					return fmt.Errorf("%s: %w; write the value out, or use '…'", argvExpansionName(inner), errArgvExpansion)
				}
			}
		default:
			return fmt.Errorf("%s: %w; write the value out, or use '…'", argvExpansionName(part), errArgvExpansion)
		}
	}
	return nil
}

func argvExpansionName(part syntax.WordPart) string {
	switch part.(type) {
	case *syntax.ParamExp:
		return "a variable ($NAME)"
	case *syntax.CmdSubst:
		return "a command substitution ($(…) or `…`)"
	case *syntax.ArithmExp:
		return "an arithmetic expansion ($((…)))"
	case *syntax.ProcSubst:
		return "a process substitution (<(…))"
	case *syntax.ExtGlob:
		return "an extended glob"
	}
	return "an expansion"
}
