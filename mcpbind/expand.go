//go:build unix

package mcpbind

import (
	"errors"

	"github.com/basis-go/basis/configfile"
)

// Placeholders are expanded by configfile, the one grammar for every
// config file basis reads: ${VAR}, and ${VAR:-default} for unset or empty.
// What is left here is saying it in this package's terms.

// placeholderProblem turns an error of configfile.Expand or
// configfile.Placeholders into the variable it names and a cause that
// wraps ErrUnsetVariable or ErrPlaceholder (and the *configfile.ExpandError
// itself). The message names the variable, never a value.
func placeholderProblem(err error) (variable string, cause error) {
	var xe *configfile.ExpandError
	if !errors.As(err, &xe) {
		return "", &problem{kind: ErrPlaceholder, cause: err, text: err.Error()}
	}
	kind := ErrPlaceholder
	if xe.Kind == configfile.PlaceholderUnset {
		kind = ErrUnsetVariable
	}
	return xe.Variable, &problem{kind: kind, cause: xe, text: xe.Error()}
}
