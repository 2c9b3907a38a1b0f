package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/subprocess"
)

// Exit statuses.
const (
	exitOK      = 0 // success
	exitFailed  = 1 // the tool ran and failed, timed out, or could not start
	exitUsage   = 2 // usage or configuration error
	exitRefused = 3 // refused before running: invalid input, preview refusal, denial, audit
)

// env is everything basis takes from the process, so tests can run the
// command in-process with their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	getwd          func() (string, error)
	// interactive reports whether stdin and stderr are terminals: whether
	// somebody is there to be asked.
	interactive func() bool
	// tty is the terminal device approval questions go to; "" means
	// /dev/tty.
	tty string
	// progressWidth is the width of the terminal on stderr, where a call's
	// progress is shown as one line that each new line replaces and that
	// is erased before the result is printed; 0 means stderr is not a
	// terminal, and no progress is shown.
	progressWidth func() int
}

func (e *env) getenv(name string) string {
	v, _ := subprocess.LookupEnv(e.environ, name)
	return v
}

// globals are the flags that come before the command.
type globals struct {
	dir       string
	configDir string
	noShell   bool
	noMCP     bool
	delegate  string
	// allSchemas: every declared tool's input schema is compiled at load
	// (basis check); other commands compile a schema at its first call.
	allSchemas bool
}

const usage = `basis — the tool runtime for LLM agents

usage: basis [-C DIR] [--config-dir DIR] [--no-shell] [--no-mcp] [--delegate 'ARGV…'] COMMAND [ARGS]

commands:
  tools [--json]                     list the tools: name, binding, side effect, source, description
                                     (and the MCP servers, each started to list its tools)
  check [--start]                    validate every configuration file; one problem per line
  call NAME [JSON | @FILE | -]       run one call through the whole pipeline; the result on stdout
       [--approve prompt|allow|deny|hook:ARGV] [--audit FILE] [--json]
  explain NAME [JSON | @FILE | -]    what a call would do and which rules decide it; runs nothing
  serve [--approve elicit|allow|deny|hook:ARGV] [--http ADDR] [--allow-remote] [--audit FILE]
                                     serve every tool as an MCP server, approvals asked in the client
  mcp list | trust | untrust         the MCP config files, and trust in the workspace's .mcp.json
  rules list | add | remove          approval rules: list every layer, add or remove the operator's
  init                               start a workspace: .basis/tools.json with an example tool
  version                            print the version and the revision it was built from

global flags (before the command):
  -C DIR              the workspace root, exactly (default: the nearest directory
                      holding .basis/, from the current one up to the
                      repository's root or $HOME)
  --config-dir DIR    the configuration directory (default: $BASIS_CONFIG_DIR,
                      else $XDG_CONFIG_HOME/basis, else ~/.config/basis)
  --no-shell          refuse spawn's command mode ("!cmd")
  --no-mcp            load no MCP config file, start no MCP server
  --delegate 'ARGV…'  the program that takes spawn's tasks, split into words as a
                      shell would, never run by one (default: $BASIS_DELEGATE;
                      with neither, tasks are refused)

exit status: 0 success, 1 the tool failed, 2 usage or configuration error,
3 refused before running (invalid input, preview refusal, denial, an audit
record that could not be written), 128+N stopped by signal N (130 for Ctrl-C).
Run "basis COMMAND --help" for a command's flags.
`

// commands are the command names, for "did you mean".
var commands = []string{"tools", "check", "call", "explain", "serve", "mcp", "rules", "init", "version", "help"}

// globalFlags are the flags that go before the command: each name and the
// value it takes ("" for none).
var globalFlags = map[string]string{"C": "DIR", "config-dir": "DIR", "no-shell": "", "no-mcp": "", "delegate": "'ARGV…'"}

// run is the whole command line; it returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	fs := flag.NewFlagSet("basis", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var g globals
	fs.StringVar(&g.dir, "C", "", "")
	fs.StringVar(&g.configDir, "config-dir", "", "")
	fs.BoolVar(&g.noShell, "no-shell", false, "")
	fs.BoolVar(&g.noMCP, "no-mcp", false, "")
	fs.StringVar(&g.delegate, "delegate", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, usage)
			return exitOK
		}
		return usageErr(e, "%s (basis help)", flagErrText(err, fs))
	}
	if fs.NArg() == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd {
	case "tools":
		return cmdTools(ctx, &g, rest, e)
	case "check":
		return cmdCheck(ctx, &g, rest, e)
	case "call":
		return cmdCall(ctx, &g, rest, e)
	case "rules":
		return cmdRules(ctx, &g, rest, e)
	case "explain":
		return cmdExplain(ctx, &g, rest, e)
	case "mcp":
		return cmdMCP(ctx, &g, rest, e)
	case "serve":
		return cmdServe(ctx, &g, rest, e)
	case "init":
		return cmdInit(&g, rest, e)
	case "version":
		return cmdVersion(rest, e)
	case "help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	}
	return usageErr(e, "unknown command %q%s; the commands are tools, check, call, explain, serve, mcp, rules, init and version (basis help)", cmd, didYouMean(cmd, commands))
}

// didYouMean is " (did you mean X?)" for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if close := configfile.Suggest(name, candidates, 1); len(close) > 0 {
		return fmt.Sprintf(" (did you mean %s?)", close[0])
	}
	return ""
}

// globalFlagAdvice is the error for global flag name given after command.
func globalFlagAdvice(name, command string) (string, bool) {
	value, global := globalFlags[name]
	if !global {
		return "", false
	}
	spelled := dashed(name)
	if value != "" {
		spelled += " " + value
	}
	return fmt.Sprintf("%s: %s is a global flag: put it before the command, as in: basis %s %s …", command, dashed(name), spelled, command), true
}

// dashed spells a flag as people type it: -C, --approve.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagErrText rewrites the flag package's errors, which spell every flag
// with one dash, as they are typed (--approve) and in basis's words.
func flagErrText(err error, fs *flag.FlagSet) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		hint := ""
		if close := configfile.Suggest(name, known, 1); len(close) > 0 {
			hint = "; did you mean " + dashed(close[0]) + "?"
		}
		return "unknown flag " + dashed(name) + hint
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return dashed(name) + " needs a value"
	}
	// invalid value "x" for flag -n: …, invalid boolean value "x" for -n: …
	if before, after, ok := strings.Cut(msg, " for flag -"); ok {
		return rewriteInvalid(before, after)
	}
	if before, after, ok := strings.Cut(msg, " for -"); ok {
		return rewriteInvalid(before, after)
	}
	return msg
}

func rewriteInvalid(before, after string) string {
	name, why, _ := strings.Cut(after, ": ")
	before = strings.Replace(before, "invalid boolean value", "invalid value", 1)
	if why == "" {
		return dashed(name) + ": " + before
	}
	return dashed(name) + ": " + before + " (" + why + ")"
}

// usageErr reports a usage problem and returns exitUsage.
func usageErr(e *env, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "basis: "+format+"\n", args...)
	return exitUsage
}

// command is one subcommand's flags and help.
type command struct {
	name  string // "call", "rules add"
	usage string // the synopsis after "basis "
	help  string // what it does, and its flags
	fs    *flag.FlagSet
}

func newCommand(name, usage, help string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &command{name: name, usage: usage, help: help, fs: fs}
}

// parse parses flags that may come before, between or after the positional
// arguments, as people type them. Everything after "--" is positional. It
// returns the positional arguments, or a non-negative exit status when the
// command should end here (help was asked for, or the flags were wrong).
func (c *command) parse(args []string, e *env) ([]string, int) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var positional []string
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(e.stdout, "usage: basis %s\n\n%s", c.usage, c.help)
				return nil, exitOK
			}
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
				if advice, global := globalFlagAdvice(name, c.name); global {
					return nil, usageErr(e, "%s", advice)
				}
			}
			return nil, usageErr(e, "%s: %s (basis %s --help)", c.name, flagErrText(err, c.fs), c.name)
		}
		args = c.fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	return append(positional, tail...), -1
}

// parseArgs is parse, then a check that between min and max positional
// arguments (max < 0: any number) were given.
func (c *command) parseArgs(args []string, min, max int, e *env) ([]string, int) {
	args, code := c.parse(args, e)
	if code >= 0 {
		return nil, code
	}
	if len(args) < min || (max >= 0 && len(args) > max) {
		return nil, usageErr(e, "%s: wrong number of arguments\nusage: basis %s", c.name, c.usage)
	}
	return args, -1
}

// oneLine returns the first line of s, for tables.
func oneLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}
