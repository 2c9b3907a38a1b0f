//go:build unix

package mcpbind

import (
	"errors"

	"github.com/basis-go/basis/configfile"
)

// inWorkspace refuses the workspace's .mcp.json at file when its real
// path lies outside root: a repository whose .mcp.json links to another
// repository's would start that file's servers under the trust and the
// rules bound to it. A link within the workspace is fine.
func inWorkspace(root, file string) error {
	_, err := configfile.Inside(root, file)
	var outside *configfile.OutsideError
	if !errors.As(err, &outside) {
		return nil
	}
	return &configfile.Error{File: file, Err: &problem{kind: errOutsideWorkspace, cause: err, text: outside.Reason()}}
}
