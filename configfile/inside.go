package configfile

import (
	"path/filepath"
)

// OutsideError refuses a workspace's config file (.basis/tools.json,
// .mcp.json, …) whose real path — every symbolic link resolved — lies
// outside the workspace. A repository whose manifest links to another
// repository's would run its own programs under the approvals bound to
// that other manifest; a workspace's configuration must be its own.
type OutsideError struct {
	// Path is the file as the workspace names it: the link.
	Path string
	// Target is its real path.
	Target string
	// Root is the workspace's real path.
	Root string
}

// Error names the link, where it leads, and what to do: the Path, then
// [OutsideError.Reason].
func (e *OutsideError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the message without the path, for a caller that names the
// file its own way.
func (e *OutsideError) Reason() string {
	return "is a symbolic link to " + e.Target + ", outside the workspace " + e.Root +
		"; a workspace's configuration must lie inside it (a link within the workspace is fine): replace the link with a copy of the file"
}

// Unwrap returns [ErrOutsideRoot].
func (e *OutsideError) Unwrap() error { return ErrOutsideRoot }

// Inside resolves path, a config file of the workspace at root, through
// every symbolic link and returns its real path, which callers read (so
// what was checked is what is read). It returns an [*OutsideError] when
// that real path is not inside root's real path, and an error wrapping
// [io/fs.ErrNotExist] when path does not exist (a dangling link included).
func Inside(root, path string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || !filepath.IsLocal(rel) {
		return "", &OutsideError{Path: path, Target: real, Root: realRoot}
	}
	return real, nil
}
