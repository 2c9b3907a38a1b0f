//go:build unix

package declared

import "github.com/basis-go/basis/configfile"

// Placeholders are expanded by configfile, the one grammar for every
// config file basis reads: ${VAR}, and ${VAR:-default} for unset or empty
// (see configfile.Expand). What is left here is saying it in this
// package's terms.

// expand replaces ${NAME} and ${NAME:-default} in s, looking names up with
// lookup; every error is a *configfile.ExpandError, which names the
// variable and wraps configfile.ErrUnsetVariable or
// configfile.ErrPlaceholder.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	return configfile.Expand(s, lookup)
}

// hasPlaceholder reports whether s holds a ${...} that expansion would
// replace, so that a preview knows to show s as written.
func hasPlaceholder(s string) bool { return configfile.HasPlaceholder(s) }

// placeholderNames lists the variables s names, defaults included, in
// order; nil when s has none or is malformed (that is reported by
// expansion).
func placeholderNames(s string) []string {
	names, err := configfile.Placeholders(s)
	if err != nil {
		return nil
	}
	return names
}

// validVarName reports whether s is a shell variable name: a letter or _
// followed by letters, digits and _.
func validVarName(s string) bool { return configfile.IsVarName(s) }

// nameByte reports whether c is one of A-Z a-z 0-9 _.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
