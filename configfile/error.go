package configfile

import (
	"fmt"
	"strings"
)

// Error is one problem with a configuration file, where it is and what it is
// about: the one error type every reader of basis's config files returns
// (manifests, MCP config files, rules files, sandbox configs), so a caller
// lists problems, sorts them and points an editor at them the same way for
// each. Its message is one line and never quotes a value from the file,
// since values may be credentials.
type Error struct {
	// File is the file's path; empty for configuration that came from
	// elsewhere (a host's own).
	File string
	// Line and Column locate the problem, both 1-based, the column in
	// characters; 0 when there is no position (the file could not be read).
	Line, Column int
	// Subject is the entry of the file the problem is in, as a reader
	// would say it: "tool deploy", "server github", "rule 3"; empty for a
	// problem of the file as a whole.
	Subject string
	// Field is the field at fault as the file spells it: "command[2]",
	// "env.API_TOKEN"; empty when the problem is not about one field.
	Field string
	// Err says what is wrong and what to do.
	Err error
}

// Error returns the one-line message, such as
//
//	/repo/.basis/tools.json:9:7: tool deploy: timout_ms: unknown key; did you mean timeout_ms?
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, max(e.Column, 1))
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, max(e.Column, 1))
	}
	if e.Subject != "" {
		b.WriteString(e.Subject + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
