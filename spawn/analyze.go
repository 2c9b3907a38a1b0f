//go:build unix

package spawn

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on a command body, checked before any parser sees it: [Parse]
// refuses a command past them, and [AnalyzeCommands] calls such a body
// unanalysable. A shell parser recurses once per level of nesting, and
// recursion past Go's stack limit is a fatal error no recover can catch.
const (
	// MaxBodyBytes is the largest command body read: 64 KiB. This bound is
	// the guarantee: the deepest 64 KiB bodies tried (nested arithmetic
	// parentheses) take the parser to about 128 MB of stack, far from
	// Go's 1 GB limit.
	MaxBodyBytes = 64 << 10
	// MaxBodyNesting is the deepest nesting of ( and { in a command body,
	// counted over the text as written without regard to quoting: a cheap
	// early refusal of what no command needs, with a clear message. Quoted
	// brackets count too, and a quoted ) or } lowers the count, so it is
	// not the bound the parser's stack relies on; MaxBodyBytes is.
	MaxBodyNesting = 64
)

// boundsProblem says how body breaks a bound, or returns "".
func boundsProblem(body string) string {
	if len(body) > MaxBodyBytes {
		return fmt.Sprintf("the command is %d bytes; the limit is %d bytes (64 KiB)", len(body), MaxBodyBytes)
	}
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '(', '{':
			depth++
			if depth > MaxBodyNesting {
				return fmt.Sprintf("the command nests ( and { more than %d deep; the limit is %d", MaxBodyNesting, MaxBodyNesting)
			}
		case ')', '}':
			depth = max(depth-1, 0)
		}
	}
	return ""
}

// AnalyzeCommands lists the simple commands of a shell command body, each
// as the exact argv its program receives, in the order they appear. It is
// what lets a rule allow "go test ./..." without allowing
// "go test ./... && curl x | sh": the preview's "commands" holds this list,
// and a rule must allow every entry.
//
// /bin/sh is dash on some systems and bash (in POSIX mode or not) on
// others, so a body is listed only when every shell reads it the same
// way: when every part of it is plain words joined by &&, ||, ;, | or
// newlines, so that what is listed is what runs. Anything else makes it
// unanalysable, an *[UnanalysableError] that says what was found:
//
//   - a word whose value is decided at run time: parameter, arithmetic,
//     command or process substitution anywhere (not only in command
//     position), a glob (*, ?, [...]), an unquoted ~ at the start of a
//     word or after = or : (bash expands it there, dash only at the start), brace expansion ({a,b}, {1..3}), $'...' or
//     $"..." quoting, a trailing backslash;
//   - variable assignments (NAME=value cmd), and a command name holding an
//     = (bash reads x+=1 and a[0]=x as assignments, dash as programs);
//   - background jobs (&), subshells, { } blocks, functions, if, for,
//     while, case;
//   - a redirection to or from a file or a here-document (fd duplications
//     such as 2>&1, and /dev/null, are fine), and any redirection naming a
//     descriptor of two or more digits (10>/dev/null: bash redirects, dash
//     runs a program named 10);
//   - a command named by a shell keyword of bash ([[ ]] function select
//     time coproc ...) or by a builtin that runs text as shell code, runs
//     commands, or changes how later words and command names resolve: see
//     shellStateBuiltins; printf -v and wait -p (they assign a variable in
//     bash); a bash builtin given an argument with [ and $ or a backquote
//     (bash may evaluate it as an array subscript, running what is inside);
//   - a body past [MaxBodyBytes] or [MaxBodyNesting], one that does not
//     parse as POSIX shell (bash-only syntax such as &>, |&, <<<, arrays,
//     extended globs, process substitution), one that runs no command at
//     all, or one that holds a carriage return, a NUL byte, U+0080 or
//     U+0081 (which the parser and /bin/sh read differently).
//
// Quoted words are literal: 'a b', "a b" and a\ b all give the argv word
// "a b". What a listed program does with its arguments (sh -c, xargs,
// find -exec) is for the rule that allows the program to weigh.
func AnalyzeCommands(body string) ([][]string, error) {
	if why := boundsProblem(body); why != "" {
		return nil, unanalysable(why)
	}
	if strings.ContainsAny(body, misreadRunes) {
		return nil, unanalysable("it contains a carriage return, a NUL byte, U+0080 or U+0081, which the parser and /bin/sh read differently")
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(body), "")
	if err != nil {
		return nil, unanalysable("it does not parse as a POSIX shell command (bash-only syntax, or a syntax error)")
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

// misreadRunes are read one way by mvdan.cc/sh and another by /bin/sh:
// the parser drops NUL bytes and reads "\r\n" as "\n", and it used U+0080
// and U+0081 internally for end of input and an escaped newline (fixed in
// v3.14.1; the guard stays), so either rune could end a parse early and
// hide what follows. The argv listed would not be the argv run.
const misreadRunes = "\r\x00\u0080\u0081"

// shellStateBuiltins are the command names that make a body unanalysable:
// shell builtins (and bash keywords, since /bin/sh is bash on some
// systems) that run text as shell code, run commands or another builtin,
// or change what later words and command names mean.
var shellStateBuiltins = map[string]bool{
	// Run text as shell code, now or later.
	"eval": true, ".": true, "source": true, "trap": true,
	// Bash arithmetic can run command substitutions hidden in array
	// subscripts; so can builtins that assign to a variable by name.
	"let": true, "read": true, "mapfile": true, "readarray": true, "getopts": true,
	// Run another builtin or keyword (command eval ..., time eval ...), or
	// a command named in an argument (jobs -x, fc, compgen -C, bind -x).
	"command": true, "builtin": true, "time": true, "coproc": true,
	"jobs": true, "fc": true, "history": true, "compgen": true, "complete": true, "compopt": true, "bind": true,
	// Replace or reconfigure the shell.
	"exec": true, "set": true, "shopt": true, "enable": true,
	// Change what later words or command names resolve to.
	"alias": true, "unalias": true, "hash": true, "export": true, "readonly": true,
	"unset": true, "local": true, "declare": true, "typeset": true,
}

// bashKeywords are reserved words in bash. A POSIX parse reads the
// bash-only ones ([[, function, select, coproc, time) as command names;
// any of them in command position means bash reads something else.
var bashKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true, "in": true,
	"function": true, "time": true, "{": true, "}": true, "!": true, "[[": true, "]]": true, "coproc": true,
}

// bashBuiltins are bash's builtin commands (bash -c 'compgen -b'). Any of
// them may read an argument as a variable name or number, and bash then
// evaluates an array subscript in it: test -v 'a[$(cmd)]' runs cmd.
var bashBuiltins = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true, "builtin": true,
	"caller": true, "cd": true, "command": true, "compgen": true, "complete": true, "compopt": true,
	"continue": true, "declare": true, "dirs": true, "disown": true, "echo": true, "enable": true,
	"eval": true, "exec": true, "exit": true, "export": true, "false": true, "fc": true, "fg": true,
	"getopts": true, "hash": true, "help": true, "history": true, "jobs": true, "kill": true, "let": true,
	"local": true, "logout": true, "mapfile": true, "popd": true, "printf": true, "pushd": true, "pwd": true,
	"read": true, "readarray": true, "readonly": true, "return": true, "set": true, "shift": true,
	"shopt": true, "source": true, "suspend": true, "test": true, "times": true, "trap": true, "true": true,
	"type": true, "typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
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
	name := argv[0]
	switch {
	case strings.ContainsRune(name, '='):
		return unanalysable(fmt.Sprintf("its command name %q holds an =: bash reads x+=1 or a[0]=x as a variable assignment where dash runs a program of that name", name))
	case bashKeywords[name]:
		return unanalysable(fmt.Sprintf("it uses %q, a keyword of bash, where a command name should be", name))
	case shellStateBuiltins[name]:
		return unanalysable(fmt.Sprintf("it runs the shell builtin %q, which runs text as shell code or other commands, or changes how later commands resolve", name))
	case name == "printf" && hasOptionPrefix(argv[1:], "-v"):
		return unanalysable("printf -v assigns a variable in bash, and dash has no -v")
	case name == "wait" && optionHolds(argv[1:], 'p'):
		return unanalysable("wait -p assigns a variable in bash, and dash has no -p")
	case bashBuiltins[name]:
		for _, arg := range argv[1:] {
			if strings.Contains(arg, "[") && strings.ContainsAny(arg, "$`") {
				return unanalysable(fmt.Sprintf("the shell builtin %q gets an argument with [ and $ or `, which bash may evaluate as an array subscript, running what it holds", name))
			}
		}
	}
	a.commands = append(a.commands, argv)
	return nil
}

// hasOptionPrefix reports whether an argument starts with prefix.
func hasOptionPrefix(args []string, prefix string) bool {
	for _, arg := range args {
		if strings.HasPrefix(arg, prefix) {
			return true
		}
	}
	return false
}

// optionHolds reports whether an option argument (one starting with "-")
// holds the letter r.
func optionHolds(args []string, r rune) bool {
	for _, arg := range args {
		if strings.HasPrefix(arg, "-") && strings.ContainsRune(arg, r) {
			return true
		}
	}
	return false
}

func (a *analysis) redirect(r *syntax.Redirect) error {
	if r.N != nil && len(r.N.Value) > 1 {
		return unanalysable(fmt.Sprintf("a redirection names descriptor %s: bash redirects it, dash reads only one digit and runs a program named %s", r.N.Value, r.N.Value))
	}
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
		// 2>&1, >&2, <&-: descriptors, not files. Only one digit: dash
		// refuses >&10 where bash accepts it.
		if target == "-" || len(target) == 1 && target[0] >= '0' && target[0] <= '9' {
			return nil
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrClob:
		if target == "/dev/null" {
			return nil
		}
	}
	return unanalysable(fmt.Sprintf("it redirects %s a file", r.Op))
}

// literalWord returns a word's value after quote removal, or says why the
// value is only known at run time, or could be read differently by
// different shells. Quote removal is done here, by the POSIX rules both
// dash and bash follow for the few forms accepted, rather than by an
// expander that knows one shell's extensions.
func literalWord(w *syntax.Word) (string, error) {
	var lw literal
	for _, part := range w.Parts {
		if err := lw.part(part); err != nil {
			return "", err
		}
	}
	value := lw.value.String()
	switch {
	case lw.braceOpen && lw.braceClose && !(value == "{}" && len(w.Parts) == 1):
		return "", unanalysable("a word has an unquoted { and } (bash brace expansion, as in {a,b} or {1..3}; dash leaves them)")
	case lw.glob:
		return "", unanalysable("a word is a glob (*, ?, [...]) that the shell expands to file names")
	}
	return value, nil
}

// literal accumulates one word's value and what its unquoted, unescaped
// characters would make the shell do.
type literal struct {
	value strings.Builder
	// braceOpen: an unquoted "{" was seen; braceClose: an unquoted "}"
	// after it.
	braceOpen, braceClose bool
	// bracketOpen: an unquoted "[" was seen, which a later "]" closes.
	bracketOpen bool
	glob        bool
}

func (lw *literal) part(part syntax.WordPart) error {
	switch p := part.(type) {
	case *syntax.Lit:
		return lw.unquoted(p.Value)
	case *syntax.SglQuoted:
		if p.Dollar {
			return unanalysable("a word uses $'...' quoting, which bash reads as escapes and dash as $ and a string")
		}
		lw.quoted(p.Value)
		return nil
	case *syntax.DblQuoted:
		if p.Dollar {
			return unanalysable(`a word uses $"..." quoting, which bash translates and dash reads as $ and a string`)
		}
		for _, inner := range p.Parts {
			lit, ok := inner.(*syntax.Lit)
			if !ok {
				return expansion(inner)
			}
			if err := lw.doubleQuoted(lit.Value); err != nil {
				return err
			}
		}
		return nil
	}
	return expansion(part)
}

// expansion says why a part that is not literal text makes the word
// unanalysable.
func expansion(part syntax.WordPart) error {
	switch part.(type) {
	case *syntax.ParamExp:
		return unanalysable("a word has a parameter expansion ($NAME)")
	case *syntax.CmdSubst:
		return unanalysable("a word has a command substitution $(...) or `...`")
	case *syntax.ArithmExp:
		return unanalysable("a word has an arithmetic expansion $((...))")
	case *syntax.ProcSubst:
		return unanalysable("a word has a process substitution <(...)")
	}
	return unanalysable("a word has an extended glob or other expansion")
}

// quoted adds text that no shell interprets.
func (lw *literal) quoted(s string) {
	lw.value.WriteString(s)
	if lw.bracketOpen && strings.Contains(s, "]") {
		lw.glob = true
	}
}

// unquoted adds unquoted text: a backslash quotes the next byte (and
// with a newline, removes both), and the bytes that make a word more than
// its text are noted.
func (lw *literal) unquoted(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 == len(s) {
				return unanalysable("a word ends with a backslash, which quotes nothing")
			}
			i++
			if s[i] != '\n' {
				lw.quoted(s[i : i+1])
			}
			continue
		case '$':
			// "$'...'" parses as "$" then a quoted string in POSIX mode,
			// but bash (and newer dash) read it as ANSI-C quoting.
			return unanalysable("a word has a $ that the shell may expand")
		case '`':
			return unanalysable("a word has a command substitution `...`")
		case '~':
			// Bash expands a ~ after = or : as well as at the start (echo
			// a=~/x), dash only at the start; anywhere else (HEAD~3) both
			// leave it.
			if v := lw.value.String(); v == "" || strings.HasSuffix(v, "=") || strings.HasSuffix(v, ":") {
				return unanalysable("a word has a ~ at its start or after = or :, which the shell may expand to a home directory")
			}
		case '*', '?':
			lw.glob = true
		case '[':
			lw.bracketOpen = true
		case ']':
			if lw.bracketOpen {
				lw.glob = true
			}
		case '{':
			lw.braceOpen = true
		case '}':
			if lw.braceOpen {
				lw.braceClose = true
			}
		}
		lw.value.WriteByte(c)
	}
	return nil
}

// doubleQuoted adds the text of a Lit inside double quotes: a backslash
// quotes only $ ` " \ and newline (removing itself, and with a newline
// both); any other backslash is kept.
func (lw *literal) doubleQuoted(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
				i++
				if s[i] != '\n' {
					lw.quoted(s[i : i+1])
				}
				continue
			}
		case '$':
			return unanalysable("a word has a $ that the shell may expand")
		case '`':
			return unanalysable("a word has a command substitution `...`")
		}
		lw.quoted(s[i : i+1])
	}
	return nil
}
