package childenv

import (
	"errors"
	"fmt"
	"strings"
)

// BasisPrefix starts the name of every variable basis reads for itself
// (BASIS_CONFIG_DIR, BASIS_SERVE_TOKEN, ...). None is ever inherited.
const BasisPrefix = "BASIS_"

// credentialWords are the parts of a name that make it look like a
// credential. Codex's default excludes (*KEY*, *SECRET*, *TOKEN*) are the
// anchor; the rest are the spellings passwords and credential files go
// by.
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "KEY"}

// withheldNames are withheld whole, although no credential word is in
// them: SSH_AUTH_SOCK hands over the operator's SSH keys, one signature at
// a time, to whoever can reach the socket; the OTLP exporter's headers
// usually hold the telemetry backend's API key ("Authorization=Bearer …").
var withheldNames = []string{"SSH_AUTH_SOCK", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"}

// IsBasisVariable reports whether name is one of basis's own: it starts
// with BASIS_ in any case.
func IsBasisVariable(name string) bool {
	return len(name) >= len(BasisPrefix) && strings.EqualFold(name[:len(BasisPrefix)], BasisPrefix)
}

// LooksLikeCredential reports whether name holds one of the words TOKEN,
// SECRET, PASSWORD, PASSWD, CREDENTIAL or KEY, in any case.
func LooksLikeCredential(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// Withheld reports whether a variable of this name is inherited only when
// a pass list names it: it looks like a credential
// ([LooksLikeCredential]), or is SSH_AUTH_SOCK or one of the OTLP
// exporter's headers variables (OTEL_EXPORTER_OTLP_HEADERS and its
// per-signal forms). basis's own variables are
// not "withheld" but never inherited at all ([IsBasisVariable]).
func Withheld(name string) bool {
	if LooksLikeCredential(name) {
		return true
	}
	for _, n := range withheldNames {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// Passes reports whether a program inherits the variable name, given the
// pass list pass: never for basis's own, only when pass matches it for a
// withheld one, always otherwise.
func Passes(name string, pass []string) bool {
	switch {
	case IsBasisVariable(name):
		return false
	case Withheld(name):
		for _, p := range pass {
			if Match(p, name) {
				return true
			}
		}
		return false
	}
	return true
}

// Inherited returns the entries of environ ("NAME=value") that a program
// inherits ([Passes]), in their order. pass lists the withheld names to
// let through, exactly or as patterns with * ([Match]). The result is a
// new slice; environ is not changed.
func Inherited(environ, pass []string) []string {
	out := make([]string, 0, len(environ))
	for _, entry := range environ {
		name, _, _ := strings.Cut(entry, "=")
		if Passes(name, pass) {
			out = append(out, entry)
		}
	}
	return out
}

// Match reports whether pattern matches name: a * in pattern matches any
// run of characters (none included); everything else matches itself,
// letter case included, as variable names are case-sensitive.
func Match(pattern, name string) bool {
	first, rest, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == name
	}
	if !strings.HasPrefix(name, first) {
		return false
	}
	name = name[len(first):]
	for {
		part, more, wild := strings.Cut(rest, "*")
		if !wild {
			// The last part anchors at the end.
			return strings.HasSuffix(name, part)
		}
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name, rest = name[i+len(part):], more
	}
}

// ErrInvalidPattern is wrapped by every error [CheckPattern] returns.
var ErrInvalidPattern = errors.New("invalid variable pattern")

// CheckPattern reports whether pattern may be in a pass list: a variable
// name (letters, digits and _, not starting with a digit) in which * may
// stand for any run of characters, such as GITHUB_TOKEN, AWS_* or *. A
// pattern that can only match basis's own variables (it starts with
// BASIS_) is refused: nothing passes those. Errors name what is wrong,
// never the pattern.
func CheckPattern(pattern string) error {
	switch {
	case pattern == "":
		return fmt.Errorf("%w: it is empty; give a variable name such as GITHUB_TOKEN, or a pattern such as AWS_*", ErrInvalidPattern)
	case IsBasisVariable(pattern):
		return fmt.Errorf("%w: basis's own variables (BASIS_*) are never passed to a program it starts", ErrInvalidPattern)
	case '0' <= pattern[0] && pattern[0] <= '9':
		return fmt.Errorf("%w: a variable name does not start with a digit", ErrInvalidPattern)
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '*') {
			return fmt.Errorf("%w: use letters, digits, _ and * only", ErrInvalidPattern)
		}
	}
	return nil
}
