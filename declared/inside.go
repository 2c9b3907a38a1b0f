//go:build unix

package declared

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/basis-go/basis/configfile"
)

// inWorkspace drops the workspace manifest from paths, with a problem
// naming the link, when its real path lies outside the workspace: a
// repository whose .basis/tools.json links to another repository's
// manifest would run its own programs under the approvals bound to that
// manifest. A link within the workspace is fine.
func (l *loader) inWorkspace(paths []string, problems []error) ([]string, []error) {
	manifest := filepath.Join(l.root, WorkspaceFile)
	i := slices.Index(paths, manifest)
	if i < 0 {
		return paths, problems
	}
	_, err := configfile.Inside(l.root, manifest)
	var outside *configfile.OutsideError
	if !errors.As(err, &outside) {
		return paths, problems
	}
	problems = append(problems, &configfile.Error{File: manifest, Err: &problem{kind: ErrOutsideWorkspace, cause: err, text: outside.Reason()}})
	return slices.Delete(slices.Clone(paths), i, i+1), problems
}
