//go:build unix

package spawn

import (
	"fmt"
	"strings"
)

// commandOutput is what the model reads of a command's output: stdout and
// stderr with trailing newlines trimmed, each labelled when both have
// something, and a note for each that was cut at its limit. It is empty
// when the command printed nothing.
func commandOutput(res CommandResult) (text string, truncated bool) {
	out := strings.TrimRight(string(res.Stdout), "\r\n")
	errs := strings.TrimRight(string(res.Stderr), "\r\n")
	if res.StdoutTruncated {
		out += fmt.Sprintf("\n[stdout truncated: only the first %d bytes were kept]", len(res.Stdout))
	}
	if res.StderrTruncated {
		errs += fmt.Sprintf("\n[stderr truncated: only the first %d bytes were kept]", len(res.Stderr))
	}
	truncated = res.StdoutTruncated || res.StderrTruncated
	switch {
	case out != "" && errs != "":
		return "stdout:\n" + out + "\nstderr:\n" + errs, truncated
	case out != "":
		return out, truncated
	}
	return errs, truncated
}

// printedNothing is the result text of a command that succeeded silently,
// so the model does not read an empty result as a failure.
const printedNothing = "the command finished and printed nothing"
