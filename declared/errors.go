//go:build unix

package declared

import (
	"errors"
	"strconv"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// ErrOutsideWorkspace: something the workspace's manifest relies on lies
// outside the workspace. Either the manifest itself is a symbolic link (or
// lies under one) whose real path is outside — a load error, also wrapping
// [configfile.ErrOutsideRoot] — or a tool's cwd leads outside (after
// expansion and symbolic links): the sandbox lets a program write in its
// working directory, so a repository could otherwise make any directory
// writable. A cwd is not a load error: it makes its tool unavailable, at
// load and at any call that finds it so, and is one of the
// [UnavailableError]'s Problems. Only the operator's own manifest may name
// a directory outside.
//
// The basis command branches on it: its STATUS column says "cwd outside
// the workspace" for such a problem and names the variable for an unset
// one ([configfile.ErrUnsetVariable]).
var ErrOutsideWorkspace = errors.New("outside the workspace")

// The kinds of problem, for this package's own use (and its tests'): a
// caller tells problems apart by their type ([*configfile.Error],
// [*UnavailableError], [*RunError], [*InputError]) and the sentinels of
// the packages beneath, [contract.ErrRefused] and
// [contract.ErrInvalidInput] above all, never by these.
var (
	// errUnreadable: a manifest exists but cannot be read (permissions,
	// not a regular file, larger than [MaxManifestSize], an I/O error, a
	// cancelled load).
	errUnreadable = errors.New("manifest cannot be read")
	// errSyntax: a manifest is not valid JSON. The [*configfile.Error] carries the
	// line and column; the offending text is never quoted.
	errSyntax = errors.New("not valid JSON")
	// errSchemaVersion: the manifest's "schema" is not 1.
	errSchemaVersion = errors.New("unsupported manifest schema version")
	// errUnknownKey: a key the format does not define, at any level.
	errUnknownKey = errors.New("unknown key")
	// errDuplicateKey: a key, tool name or env name written twice in one
	// object.
	errDuplicateKey = errors.New("duplicate key")
	// errMissingField: "schema", "tools", or a tool's "description",
	// "input_schema" or "command" is missing (a blank description counts
	// as missing).
	errMissingField = errors.New("missing field")
	// errWrongType: a field holds the wrong kind of JSON value.
	errWrongType = errors.New("wrong JSON type")
	// errReservedName: a tool name begins with the MCP prefix or is one
	// the host reserves ([Options.Reserved]).
	errReservedName = errors.New("reserved tool name")
	// errInvalidSchema: a tool's input_schema is not an object schema or
	// does not compile as a JSON Schema.
	errInvalidSchema = errors.New("invalid input_schema")
	// errInvalidCommand: a command that is empty, has a blank program, or
	// holds a NUL byte.
	errInvalidCommand = errors.New("invalid command")
	// errInvalidValue: a field whose value is not allowed: timeout_ms out
	// of range, an unknown side_effect, an empty cwd, an env name that is
	// not a variable name, a NUL byte.
	errInvalidValue = errors.New("invalid value")
	// errLoaderVariable: a manifest's env sets a variable the dynamic
	// loader reads to run other code inside the program (LD_PRELOAD,
	// LD_LIBRARY_PATH, LD_AUDIT, DYLD_*).
	errLoaderVariable = errors.New("loader variable in env")
	// errUnavailable: a tool cannot run here, because a ${VAR} it needs
	// names a variable that is not set, or because it is a workspace
	// tool whose cwd leads outside the workspace. The tool is still
	// listed; its calls are refused with an [*UnavailableError], which
	// also wraps [contract.ErrRefused] and [configfile.ErrUnsetVariable]
	// or [ErrOutsideWorkspace].
	errUnavailable = errors.New("tool unavailable")
	// errCannotStart: [Tool.CheckStart] found that the program cannot
	// start: it is missing, not executable, a directory, its #!
	// interpreter is missing, or its working directory cannot be entered.
	errCannotStart = errors.New("program cannot start")
	// errNotConfined: the host's sandbox ([Options.Sandbox]) could not
	// confine the tool's program, so the call is refused (the error also
	// wraps [contract.ErrRefused] and the sandbox's own error). The
	// program never runs unconfined instead.
	errNotConfined = errors.New("program cannot be confined")
)

// problem is the cause inside a [*configfile.Error]: a message that reads
// naturally and a kind for errors.Is.
type problem struct {
	kind  error
	cause error // the operating system's reason, when there is one
	text  string
}

func (p *problem) Error() string { return p.text }

func (p *problem) Unwrap() []error {
	if p.cause != nil {
		return []error{p.kind, p.cause}
	}
	return []error{p.kind}
}

func newProblem(kind error, text string) error { return &problem{kind: kind, text: text} }

// InputError refuses a call whose input is not a JSON object or does not
// match the tool's schema; see [inputschema.InputError].
type InputError = inputschema.InputError

// InputProblem is one field of a call's input that breaks the schema; see
// [inputschema.Problem].
type InputProblem = inputschema.Problem

// UnavailableError refuses a call to a tool that cannot run here: a ${VAR}
// in its command, cwd or env names a variable that is not set and has no
// default, or the tool is a workspace manifest's and its cwd leads outside
// the workspace. [Tool.AuthorizationPreview] and [Tool.Execute] return it,
// and [Tool.Unavailable] reports it ahead of any call. It wraps
// [contract.ErrRefused] and, through Problems,
// [configfile.ErrUnsetVariable] (the variable is the
// [*configfile.ExpandError]'s, reached with [errors.As]) or
// [ErrOutsideWorkspace]. It names variables and fields, never a value.
type UnavailableError struct {
	// Tool is the tool's name.
	Tool string
	// Source is the manifest that declares it.
	Source string
	// Problems lists each placeholder naming an unset variable, and a cwd
	// outside the workspace, located in the manifest, in file order.
	Problems []*configfile.Error
}

// Error returns one line naming the variables and fields and what to do,
// such as
//
//	jenkins_job is unavailable: variable JENKINS_TOKEN (env.JENKINS_TOKEN, /repo/.basis/tools.json:9:26) is not set; set it in the environment basis runs in, or give a default in the manifest: ${JENKINS_TOKEN:-default}
//	build is unavailable: its cwd (/repo/.basis/tools.json:8:14) leads outside the workspace once placeholders are expanded and symbolic links followed; ...
func (e *UnavailableError) Error() string {
	var vars, where, defaults, others []string
	for _, p := range e.Problems {
		at := ""
		if p.Line > 0 {
			at = p.File + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
		}
		var xe *configfile.ExpandError
		if !errors.As(p, &xe) || !errors.Is(xe, configfile.ErrUnsetVariable) {
			if at == "" {
				at = p.File
			}
			others = append(others, "its "+p.Field+" ("+at+") "+p.Err.Error())
			continue
		}
		vars = append(vars, xe.Variable)
		if at != "" {
			at = ", " + at
		}
		where = append(where, xe.Variable+" ("+p.Field+at+")")
		defaults = append(defaults, "${"+xe.Variable+":-default}")
	}
	var clauses []string
	if len(vars) > 0 {
		noun, verb := "variable ", " is not set"
		if len(vars) > 1 {
			noun, verb = "variables ", " are not set"
		}
		clauses = append(clauses, noun+strings.Join(where, ", ")+verb+
			"; set "+them(len(vars))+" in the environment basis runs in, or give a default in the manifest: "+strings.Join(defaults, ", "))
	}
	return e.Tool + " is unavailable: " + strings.Join(append(clauses, others...), "; ")
}

// outsideWorkspace is the problem of a workspace tool's cwd that leads
// outside the workspace; cause is configfile's error.
func outsideWorkspace(cause error) error {
	return &problem{kind: ErrOutsideWorkspace, cause: cause,
		text: "leads outside the workspace once placeholders are expanded and symbolic links followed, and a workspace tool runs inside its workspace: " +
			"give a directory in it (only the operator's own tools.json may name one elsewhere)"}
}

// Unwrap returns [contract.ErrRefused] and each problem.
func (e *UnavailableError) Unwrap() []error {
	out := []error{contract.ErrRefused, errUnavailable}
	for _, p := range e.Problems {
		out = append(out, p)
	}
	return out
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// Warning is something in a manifest that works but should change. Today
// there is one kind: a command argument holding a ${VAR} whose name looks
// like a credential (TOKEN, SECRET, KEY or PASSWORD in it, any case). An
// argument is visible to every local user in /proc/<pid>/cmdline while
// the program runs; env is not. `basis check` prints warnings and still
// succeeds. A Warning names the variable, never its value.
type Warning struct {
	// File, Line and Column locate the argument.
	File         string
	Line, Column int
	// Tool and Field name the tool and the argument ("command[2]").
	Tool, Field string
	// Variable is the variable the argument expands.
	Variable string
}

// String returns one line, such as
//
//	/repo/.basis/tools.json:7:40: tool deploy: command[2]: ${DEPLOY_TOKEN} looks like a credential in an argument, which every local user can read in /proc/<pid>/cmdline while the tool runs; pass it in "env" and let the program read it from there
func (w Warning) String() string {
	return w.File + ":" + strconv.Itoa(w.Line) + ":" + strconv.Itoa(w.Column) + ": tool " + w.Tool + ": " + w.Field +
		": ${" + w.Variable + "} looks like a credential in an argument, which every local user can read in /proc/<pid>/cmdline while the tool runs; " +
		`pass it in "env" and let the program read it from there`
}

// RunError is a call that ran (or tried to) and failed: the program exited
// non-zero, was killed by a signal, ran out of time, was cancelled, or
// could not start. Its message is what the model reads, such as
// "jenkins_job exited 3: job not found". Err is the
// [*subprocess.ExitError] carrying the exact outcome, so a host reads the
// exit status with [errors.As] instead of parsing text.
type RunError struct {
	// Tool is the tool's name.
	Tool string
	// Err is the *subprocess.ExitError (or, for a command subprocess
	// refused outright, the error wrapping subprocess.ErrInvalidCmd).
	Err error
	msg string
}

// Error returns the message the model reads.
func (e *RunError) Error() string { return e.msg }

// Unwrap returns the *subprocess.ExitError.
func (e *RunError) Unwrap() error { return e.Err }

// invalidSchemaError refuses the calls of a tool whose input_schema,
// compiled at its first use ([Options.DeferSchemas]), does not compile.
// It wraps [contract.ErrRefused] and each problem, located in the
// manifest as Load reports it without DeferSchemas.
type invalidSchemaError struct {
	tool     string
	problems []*configfile.Error
}

func invalidSchema(tool string, problems []*configfile.Error) *invalidSchemaError {
	return &invalidSchemaError{tool: tool, problems: problems}
}

// Error names the tool and every problem of its schema.
func (e *invalidSchemaError) Error() string {
	parts := make([]string, len(e.problems))
	for i, p := range e.problems {
		parts[i] = p.Error()
	}
	return e.tool + " cannot run: its input_schema does not compile: " + strings.Join(parts, "; ")
}

// Unwrap returns contract.ErrRefused and each problem.
func (e *invalidSchemaError) Unwrap() []error {
	out := []error{contract.ErrRefused}
	for _, p := range e.problems {
		out = append(out, p)
	}
	return out
}
