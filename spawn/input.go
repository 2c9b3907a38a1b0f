//go:build unix

package spawn

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/basis-go/basis/contract"
)

// Mode says what a spawn input asks for. Its value is the word a preview's
// subject carries under "mode".
type Mode string

const (
	// ModeCommand runs the body as a shell command ("!cmd", "!@target cmd").
	ModeCommand Mode = "command"
	// ModeAgent hands the body to a subagent as a task (any other text).
	ModeAgent Mode = "agent"
)

// LocalTarget is the wire word for "here": the target a preview names when
// a command runs on this machine. It can never be registered as a target,
// and "!@local cmd" means the same as "!cmd".
const LocalTarget = "local"

// Input is a spawn input after the one parse. Everything downstream of
// [Parse] works on these fields and never looks at the string again.
type Input struct {
	// Mode is ModeCommand or ModeAgent.
	Mode Mode
	// Body is the command to run, or the task to delegate. Never empty.
	Body string
	// Target is the registered target a command runs on; "" means here
	// ([LocalTarget] on the wire). Always "" for a task.
	Target string
}

// String returns the wire form that [Parse] turns back into the same Input:
// "!" + body for a command here ("! " + body when the body itself starts
// with "!" or "@"), "!@" + target + " " + body on a target, and the task
// text for a task ("!" + text when the text itself starts with "!").
func (in Input) String() string {
	switch {
	case in.Mode == ModeCommand && in.Target != "":
		return "!@" + in.Target + " " + in.Body
	case in.Mode == ModeCommand && (strings.HasPrefix(in.Body, "!") || strings.HasPrefix(in.Body, "@")):
		return "! " + in.Body
	case in.Mode == ModeCommand, strings.HasPrefix(in.Body, "!"):
		return "!" + in.Body
	}
	return in.Body
}

// The working forms the parse errors show.
const (
	exampleCommand = `!go test ./...`
	exampleTarget  = `!@mac xcodebuild -list`
	exampleTask    = `Find where the config file is parsed and summarise it`
	exampleEscape  = `!!important: check the release notes`
)

// Parse is the one parse of a spawn input, at the edge. The string is
// trimmed once; then:
//
//   - "!cmd" is a command run here (whitespace after the "!" is dropped);
//   - "!!text" is a task whose text is "!text";
//   - "!@name cmd" is a command run on the target name (letters, digits, _
//     and -; "!@local cmd" is the same as "!cmd");
//   - anything else is a task.
//
// An empty input, "!" or "!@" alone, a space right after "!@", a target
// with no command, a target name outside those characters or longer than
// 64, a NUL byte anywhere, and a command past [MaxBodyBytes] or
// [MaxBodyNesting] are refused: an *[InputError] that shows the working
// form and wraps [contract.ErrInvalidInput].
func Parse(input string) (Input, error) {
	s := strings.TrimSpace(input)
	switch {
	case s == "":
		return Input{}, inputError("the input is empty",
			fmt.Sprintf("%q to run a command, or the text of a task such as %q", exampleCommand, exampleTask))
	case strings.IndexByte(s, 0) >= 0:
		return Input{}, inputError("the input contains a NUL byte, which no command or task can carry",
			fmt.Sprintf("%q, with no NUL byte", exampleCommand))
	case strings.HasPrefix(s, "!!"):
		return Input{Mode: ModeAgent, Body: s[1:]}, nil
	case strings.HasPrefix(s, "!@"):
		return parseTarget(s[len("!@"):])
	case strings.HasPrefix(s, "!"):
		body := strings.TrimLeftFunc(s[1:], unicode.IsSpace)
		if body == "" {
			return Input{}, inputError(`"!" alone is not a command`, fmt.Sprintf("%q: the command right after the \"!\"", exampleCommand))
		}
		return checkBounds(Input{Mode: ModeCommand, Body: body})
	}
	return Input{Mode: ModeAgent, Body: s}, nil
}

// checkBounds refuses a command body past [MaxBodyBytes] or
// [MaxBodyNesting] before any shell parser — the analysis's or
// /bin/sh's — reads it.
func checkBounds(in Input) (Input, error) {
	if problem := boundsProblem(in.Body); problem != "" {
		return Input{}, inputError(problem, fmt.Sprintf("a shorter, flatter command, as in %q, or put the work in a script and run that", exampleCommand))
	}
	return in, nil
}

// parseTarget parses what follows "!@": a target name, whitespace, a command.
func parseTarget(rest string) (Input, error) {
	form := fmt.Sprintf("%q: the target name right after \"!@\", a space, then the command", exampleTarget)
	if rest == "" {
		return Input{}, inputError(`"!@" needs a target name and a command`, form)
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end == 0 {
		return Input{}, inputError(`"!@" must be followed directly by a target name, with no space`, form)
	}
	name, body := rest, ""
	if end > 0 {
		name, body = rest[:end], strings.TrimLeftFunc(rest[end:], unicode.IsSpace)
	}
	if len(name) > contract.MaxNameLen {
		return Input{}, inputError(fmt.Sprintf("a target name of %d characters is too long; names have at most %d", len(name), contract.MaxNameLen), form)
	}
	if !contract.ValidName(name) {
		return Input{}, inputError(fmt.Sprintf("target name %q may hold only A-Z a-z 0-9 _ -", name), form)
	}
	if body == "" {
		return Input{}, inputError(fmt.Sprintf("target %q needs a command after its name", name), form)
	}
	if name == LocalTarget {
		name = ""
	}
	return checkBounds(Input{Mode: ModeCommand, Body: body, Target: name})
}
