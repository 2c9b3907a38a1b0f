package spawn

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// AnalyzeCommands lists the simple commands of a shell command body, each
// as the exact argv its program receives, in the order they appear. It is
// what lets a rule allow "go test ./..." without allowing
// "go test ./... && curl x | sh": the preview's "commands" holds this list,
// and a rule must allow every entry.
//
// The body is parsed as POSIX shell (mvdan.cc/sh/v3/syntax). It can be
// listed only when every part of it is plain words joined by &&, ||, ;, |
// or newlines, so that what is listed is what runs. Anything else makes it
// unanalysable, an error wrapping [ErrUnanalysable] that says what was
// found:
//
//   - a word whose value is decided at run time: parameter, arithmetic,
//     command or process substitution anywhere (not only in command
//     position), a glob (*, ?, [...]), a leading ~, brace expansion,
//     $'...' or $"..." quoting;
//   - variable assignments (NAME=value cmd), background jobs (&),
//     subshells, { } blocks, functions, if, for, while, case;
//   - a redirection to or from a file or a here-document (fd duplications
//     such as 2>&1, and /dev/null, are fine);
//   - a command named by a shell builtin that runs text as shell code or
//     changes how later commands resolve: eval . source trap let read
//     mapfile readarray getopts command builtin time coproc exec set shopt
//     enable alias unalias hash export readonly unset local declare typeset;
//   - a body that does not parse, that runs no command at all, or that
//     holds a carriage return, a NUL byte, U+0080 or U+0081 (which the
//     parser and /bin/sh read differently).
//
// Quoted words are literal: 'a b', "a b" and a\ b all give the argv word
// "a b". What a listed program does with its arguments (sh -c, xargs,
// find -exec) is for the rule that allows the program to weigh.
func AnalyzeCommands(body string) ([][]string, error) {
	if strings.ContainsAny(body, misreadRunes) {
		return nil, unanalysable("it contains a carriage return, a NUL byte, U+0080 or U+0081, which the parser and /bin/sh read differently")
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(body), "")
	if err != nil {
		return nil, unanalysable("it does not parse as a POSIX shell command")
	}
	// Whatever the parser did not reach, the shell would still run.
	if end := file.End().Offset(); end < uint(len(strings.TrimRight(body, " \t\n"))) {
		return nil, unanalysable("the parser stopped before the end of the body")
	}
	var a analysis
	for _, stmt := range file.Stmts {
		if err := a.stmt(stmt); err != nil {
			return nil, err
		}
	}
	if len(a.commands) == 0 {
		return nil, unanalysable("it runs no command")
	}
	return a.commands, nil
}

// misreadRunes are read one way by mvdan.cc/sh v3.13 and another by
// /bin/sh: the parser drops NUL bytes and reads "\r\n" as "\n", and it
// uses U+0080 and U+0081 internally for end of input and an escaped
// newline, so either rune can end a parse early and hide what follows. The
// argv listed would not be the argv run.
const misreadRunes = "\r\x00\u0080\u0081"

func unanalysable(why string) error { return fmt.Errorf("%w: %s", ErrUnanalysable, why) }

// shellStateBuiltins are the command names that make a body unanalysable:
// shell builtins (and bash keywords, since /bin/sh is bash on some
// systems) that run text as shell code, run another builtin, or change what
// later words and command names mean.
var shellStateBuiltins = map[string]bool{
	// Run text as shell code, now or later.
	"eval": true, ".": true, "source": true, "trap": true,
	// Bash arithmetic can run command substitutions hidden in array
	// subscripts; so can builtins that assign to a variable by name.
	"let": true, "read": true, "mapfile": true, "readarray": true, "getopts": true,
	// Run another builtin or keyword (command eval ..., time eval ...).
	"command": true, "builtin": true, "time": true, "coproc": true,
	// Replace or reconfigure the shell.
	"exec": true, "set": true, "shopt": true, "enable": true,
	// Change what later words or command names resolve to.
	"alias": true, "unalias": true, "hash": true, "export": true, "readonly": true,
	"unset": true, "local": true, "declare": true, "typeset": true,
}

// analysis collects the simple commands of one body.
type analysis struct {
	commands [][]string
}

func (a *analysis) stmt(s *syntax.Stmt) error {
	if s.Background || s.Coprocess || s.Disown {
		return unanalysable("a command runs in the background (&)")
	}
	if s.Cmd == nil {
		return unanalysable("a redirection has no command")
	}
	for _, r := range s.Redirs {
		if err := a.redirect(r); err != nil {
			return err
		}
	}
	switch cmd := s.Cmd.(type) {
	case *syntax.CallExpr:
		return a.call(cmd)
	case *syntax.BinaryCmd:
		switch cmd.Op {
		case syntax.AndStmt, syntax.OrStmt, syntax.Pipe:
		default:
			return unanalysable(fmt.Sprintf("it joins commands with %s", cmd.Op))
		}
		if err := a.stmt(cmd.X); err != nil {
			return err
		}
		return a.stmt(cmd.Y)
	case *syntax.Subshell:
		return unanalysable("it has a subshell ( )")
	case *syntax.Block:
		return unanalysable("it has a { } block")
	case *syntax.FuncDecl:
		return unanalysable("it defines a function")
	case *syntax.IfClause:
		return unanalysable("it has an if")
	case *syntax.ForClause:
		return unanalysable("it has a for loop")
	case *syntax.WhileClause:
		return unanalysable("it has a while or until loop")
	case *syntax.CaseClause:
		return unanalysable("it has a case")
	default:
		return unanalysable("it has a compound command")
	}
}

func (a *analysis) call(c *syntax.CallExpr) error {
	if len(c.Assigns) > 0 {
		return unanalysable("it assigns a variable (NAME=value)")
	}
	argv := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		word, err := literalWord(w)
		if err != nil {
			return err
		}
		argv = append(argv, word)
	}
	if shellStateBuiltins[argv[0]] {
		return unanalysable(fmt.Sprintf("it runs the shell builtin %q, which runs text as shell code or changes how later commands resolve", argv[0]))
	}
	a.commands = append(a.commands, argv)
	return nil
}

func (a *analysis) redirect(r *syntax.Redirect) error {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return unanalysable("it has a here-document")
	}
	target, err := literalWord(r.Word)
	if err != nil {
		return err
	}
	switch r.Op {
	case syntax.DplIn, syntax.DplOut:
		if target == "-" || target != "" && strings.Trim(target, "0123456789") == "" {
			return nil // 2>&1, >&2, <&-: descriptors, not files
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrClob:
		if target == "/dev/null" {
			return nil
		}
	}
	return unanalysable(fmt.Sprintf("it redirects %s a file", r.Op))
}

// literalWord returns a word's value after quote removal, or says why the
// value is only known at run time.
func literalWord(w *syntax.Word) (string, error) {
	// Most words are plain text that no step below would change.
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, plainExcept) {
			return lit.Value, nil
		}
	}
	for _, part := range w.Parts {
		if err := literalPart(part); err != nil {
			return "", err
		}
	}
	braces := *w
	if syntax.SplitBraces(&braces) && slices.ContainsFunc(braces.Parts, isBraceExp) {
		return "", unanalysable("a word has brace expansion {a,b}")
	}
	// The expander does the quote removal. Given no environment, anything
	// in the word that consults one (a leading ~) is found here.
	probe := &expansionProbe{}
	cfg := &expand.Config{Env: probe}
	fields, err := expand.Fields(cfg, w)
	if probe.tilde {
		return "", unanalysable("a word starts with ~, which the shell expands to a home directory")
	}
	if err != nil || len(fields) != 1 {
		return "", unanalysable("a word does not expand to exactly one literal word")
	}
	// As a pattern, quoted parts are escaped and unquoted ones kept as
	// written; a pattern with a metacharacter that also compiles is what
	// the shell would match against file names ("[" alone does not compile,
	// and the shell leaves it as it is).
	if pat, err := expand.Pattern(cfg, w); err != nil || isGlob(pat) {
		return "", unanalysable("a word is a glob (*, ?, [...]) that the shell expands to file names")
	}
	return fields[0], nil
}

// plainExcept are the bytes that make an unquoted word more than its text:
// escapes, tilde, braces, glob metacharacters and $.
const plainExcept = "\\~{*?[$"

func isBraceExp(part syntax.WordPart) bool {
	_, ok := part.(*syntax.BraceExp)
	return ok
}

func isGlob(pat string) bool {
	if !pattern.HasMeta(pat, 0) {
		return false
	}
	_, err := pattern.Regexp(pat, pattern.Filenames|pattern.EntireString)
	return err == nil
}

// literalPart accepts the parts a literal word is made of: plain text,
// and single or double quotes with only plain text inside.
func literalPart(part syntax.WordPart) error {
	switch p := part.(type) {
	case *syntax.Lit:
		if bareDollar(p.Value) {
			// "$'...'" parses as "$" then a quoted string in POSIX mode, but
			// bash (and newer dash) read it as ANSI-C quoting.
			return unanalysable("a word has a $ that the shell may expand")
		}
		return nil
	case *syntax.SglQuoted:
		if p.Dollar {
			return unanalysable("a word uses $'...' quoting")
		}
		return nil
	case *syntax.DblQuoted:
		if p.Dollar {
			return unanalysable(`a word uses $"..." quoting`)
		}
		for _, inner := range p.Parts {
			if _, ok := inner.(*syntax.Lit); !ok {
				return literalPart(inner)
			}
		}
		return nil
	case *syntax.ParamExp:
		return unanalysable("a word has a parameter expansion ($NAME)")
	case *syntax.CmdSubst:
		return unanalysable("a word has a command substitution $(...)")
	case *syntax.ArithmExp:
		return unanalysable("a word has an arithmetic expansion $((...))")
	case *syntax.ProcSubst:
		return unanalysable("a word has a process substitution <(...)")
	default:
		return unanalysable("a word has an extended glob or other expansion")
	}
}

// bareDollar reports whether unquoted text holds a "$" that no backslash
// escapes.
func bareDollar(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			return true
		}
	}
	return false
}

// expansionProbe stands in for the environment while the expander
// removes quotes, and records whether tilde expansion asked for a home
// directory.
type expansionProbe struct {
	tilde bool
}

// Get is asked for HOME (or "HOME user") by tilde expansion, and for
// IFS and PWD on every expansion, which change nothing here. Parameter
// expansions were refused before the expander ran, so no other name can
// come.
func (p *expansionProbe) Get(name string) expand.Variable {
	if name != "HOME" && !strings.HasPrefix(name, "HOME ") {
		return expand.Variable{}
	}
	p.tilde = true
	// A set value keeps the expander from looking the user up itself.
	return expand.Variable{Set: true, Kind: expand.String}
}

// Each lists no variables.
func (p *expansionProbe) Each(func(name string, vr expand.Variable) bool) {}
