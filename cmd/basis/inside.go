package main

import (
	"errors"

	"github.com/basis-go/basis/configfile"
)

// outsideWorkspace refuses a workspace config file (.basis/rules.json,
// .basis/sandbox.json, .mcp.json to trust) whose real path lies outside
// the workspace, naming the link; nil when it lies inside or does not
// exist (declared and mcpbind refuse their own files the same way). A
// repository's configuration is its own: one that links to another's
// would borrow what was decided about that other file.
func (w *workspace) outsideWorkspace(path string) error {
	_, err := configfile.Inside(w.root, path)
	var outside *configfile.OutsideError
	if errors.As(err, &outside) {
		return outside
	}
	return nil
}
