package main

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// ErrArgvExpansion is wrapped by the error for an argv string that asks
// for an expansion ($VAR, $(cmd), a glob, ~, {a,b}): basis splits words
// as a shell would but never expands them, so what runs is exactly what
// was written.
var ErrArgvExpansion = errors.New("expansions are not performed")

// splitArgv splits an argv string (--delegate, $BASIS_DELEGATE, a hook) into
// words as a POSIX shell splits a command's arguments: blanks separate
// words, and quotes and backslashes keep them together. Nothing is run
// through a shell and nothing is expanded; a word that a shell would
// expand is an error, so "$HOME/bin/agent" cannot mean one thing here and
// another in a terminal. An empty or blank string is no words.
func splitArgv(s string) ([]string, error) {
	var words []string
	p := syntax.NewParser()
	for w, err := range p.WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return nil, fmt.Errorf("cannot split %s into words: %v", describeArgv(s), err)
		}
		if err := literalWord(w); err != nil {
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

// literalWord refuses every part of a word that a shell would expand.
func literalWord(w *syntax.Word) error {
	if syntax.SplitBraces(w) {
		return fmt.Errorf("a brace expansion {…}: %w; quote the braces", ErrArgvExpansion)
	}
	for i, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			if pattern.HasMeta(part.Value, 0) {
				return fmt.Errorf("a glob (*, ? or […]): %w; quote it", ErrArgvExpansion)
			}
			if i == 0 && strings.HasPrefix(part.Value, "~") {
				return fmt.Errorf("a ~ for a home directory: %w; write the path out", ErrArgvExpansion)
			}
		case *syntax.SglQuoted:
			if part.Dollar {
				return fmt.Errorf("a $'…' string: %w; use '…'", ErrArgvExpansion)
			}
		case *syntax.DblQuoted:
			if part.Dollar {
				return fmt.Errorf("a $\"…\" string: %w; use \"…\"", ErrArgvExpansion)
			}
			for _, inner := range part.Parts {
				if _, ok := inner.(*syntax.Lit); !ok {
					return fmt.Errorf("%s: %w; write the value out, or use '…'", expansionName(inner), ErrArgvExpansion)
				}
			}
		default:
			return fmt.Errorf("%s: %w; write the value out, or use '…'", expansionName(part), ErrArgvExpansion)
		}
	}
	return nil
}

func expansionName(part syntax.WordPart) string {
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
