//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
)

// symlinkPrefix begins the pin of a file in the workspace that is a link
// to one outside it: its target, in place of a hash.
const symlinkPrefix = "symlink:"

// pinFiles returns what a stdio server runs from the workspace root:
// its program and every argument that names a regular file, when the
// file lies in root after symlinks — by absolute path, "sha256:" and the
// hex SHA-256 of the content — and, for a link in root to a file outside
// it, "symlink:" and the target. A command or argument with placeholders
// is not looked at (its value may be a credential), nor is a relative one
// under a cwd with placeholders. A relative program resolves as the
// launcher starts it: against the server's directory when it holds a
// slash, in PATH otherwise. An http or sse server, and a root of "", pin
// nothing.
func pinFiles(ctx context.Context, s ServerConfig, root string) (map[string]string, error) {
	files := map[string]string{}
	if s.Type != TypeStdio || root == "" {
		return files, nil
	}
	dir, dirOK := serverDir(s)
	resolve := func(p string) (string, bool) {
		switch {
		case p == "" || configfile.HasPlaceholder(p):
			return "", false
		case filepath.IsAbs(p):
			return filepath.Clean(p), true
		case !dirOK:
			return "", false
		}
		return filepath.Join(dir, p), true
	}
	var candidates []string
	switch {
	case configfile.HasPlaceholder(s.Command):
	case strings.Contains(s.Command, "/"):
		if p, ok := resolve(s.Command); ok {
			candidates = append(candidates, p)
		}
	default:
		if p, err := exec.LookPath(s.Command); err == nil && filepath.IsAbs(p) {
			candidates = append(candidates, p)
		}
	}
	for _, a := range s.Args {
		if p, ok := resolve(a); ok {
			candidates = append(candidates, p)
		}
	}
	realRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		realRoot = r
	}
	for _, path := range candidates {
		if _, done := files[path]; done {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			continue // missing: nothing to run
		}
		if !configfile.Within(real, realRoot) {
			if configfile.Within(path, root) || configfile.Within(path, realRoot) {
				files[path] = symlinkPrefix + real
			}
			continue
		}
		sum, err := configfile.HashFile(ctx, path)
		var nr *configfile.NotRegularError
		switch {
		case errors.As(err, &nr), errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Err: &problem{kind: errUnreadable, cause: err,
				text: path + " cannot be read to pin what the server runs: " + configfile.Reason(err)}}
		}
		files[path] = sum
	}
	return files, nil
}

// serverDir is the directory a stdio server starts in, as written: its
// cwd (relative to its config file's directory), else its config file's
// directory for a workspace server and basis's own for the others. It is
// not known when the cwd has placeholders.
func serverDir(s ServerConfig) (string, bool) {
	base := ""
	if s.File != "" {
		base = filepath.Dir(s.File)
	}
	switch {
	case configfile.HasPlaceholder(s.Cwd):
		return "", false
	case filepath.IsAbs(s.Cwd):
		return filepath.Clean(s.Cwd), true
	case s.Cwd != "" && base != "":
		return filepath.Join(base, s.Cwd), true
	case s.Cwd == "" && s.Origin.workspace() && base != "":
		return base, true
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	return filepath.Join(wd, s.Cwd), true
}

// pinAll pins the files of every server of one config file, merged.
func pinAll(ctx context.Context, servers []ServerConfig, root string) (map[string]string, error) {
	all := map[string]string{}
	for _, s := range servers {
		files, err := pinFiles(ctx, s, root)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, files)
	}
	return all, nil
}

// changedPins lists, sorted, the files whose pin differs between the
// trusted and the current: changed, new, or gone.
func changedPins(trusted, current map[string]string) []string {
	var out []string
	for path, pin := range current {
		if trusted[path] != pin {
			out = append(out, path)
		}
	}
	for path := range trusted {
		if _, ok := current[path]; !ok {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// changedText says which files changed since a file was trusted, for a
// status line: "server.js changed since .mcp.json was trusted; look at
// it, then run basis mcp trust", paths shown relative to the file's
// directory.
func changedText(file string, changed []string) string {
	dir := filepath.Dir(file)
	shown := make([]string, len(changed))
	for i, p := range changed {
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
			p = rel
		}
		shown[i] = p
	}
	verb := "changed"
	if len(shown) > 1 {
		verb = "have changed"
	}
	return strings.Join(shown, ", ") + " " + verb + " since " + filepath.Base(file) + " was trusted; look at what it runs now, then run basis mcp trust"
}
