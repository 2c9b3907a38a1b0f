//go:build unix

package mcpbind

import (
	"errors"

	"github.com/basis-go/basis/configfile"
)

// Placeholders are expanded by configfile, the one grammar for every
// config file basis reads: ${VAR}, and ${VAR:-default} for unset or empty.
// What is left here is saying it in this package's terms.

// placeholderProblem is the cause of a config error about a placeholder:
// an error of configfile.Expand or configfile.Placeholders, which wraps
// configfile.ErrUnsetVariable or configfile.ErrPlaceholder, and whose
// *configfile.ExpandError (errors.As) names the variable, never a value.
func placeholderProblem(err error) error {
	var xe *configfile.ExpandError
	if errors.As(err, &xe) {
		return xe
	}
	return &problem{kind: configfile.ErrPlaceholder, cause: err, text: err.Error()}
}
