package configfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is wrapped by the error [WithinRoot] returns for a
// directory that leads outside the root it must stay in, and by an
// [*OutsideError] for a config file whose real path does.
var ErrOutsideRoot = errors.New("outside the workspace")

// WithinRoot resolves dir — taken relative to root unless it is absolute
// — following every symbolic link and ".." the way the kernel would, and
// returns the real path when it is root itself or lies beneath root (whose
// own links are resolved too). This is how a directory a repository's
// config file names is kept inside the repository: "../../etc", an
// absolute path elsewhere and a link planted in the workspace that points
// out all lead outside, and are refused with an error wrapping
// [ErrOutsideRoot].
//
// A dir that does not exist is judged by the part of it that does: when
// that part, with the rest appended (and its ".." applied), leads outside,
// the error wraps ErrOutsideRoot; otherwise it is the operating system's
// error (wrapping [fs.ErrNotExist]). Any other failure to resolve (a
// file where a directory should be, no permission, a link loop) is the
// operating system's error. Use [Reason] for its words: the *fs.PathError
// quotes a path, which a message must not when dir came from expanding a
// placeholder.
//
// The answer holds when it is given. A program that can write inside
// root can swap a directory for a link afterwards, so call WithinRoot
// again right before the directory is used, and use the path it returns
// rather than dir.
func WithinRoot(root, dir string) (string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", err
	}
	path := dir
	if !filepath.IsAbs(dir) {
		// Not filepath.Join, which would apply ".." before the links
		// before it are followed.
		path = absRoot + string(filepath.Separator) + dir
	}
	real, err := filepath.EvalSymlinks(path)
	if err == nil {
		if !Within(real, realRoot) {
			return "", ErrOutsideRoot
		}
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	existing, rest := existingPrefix(path)
	realExisting, perr := filepath.EvalSymlinks(existing)
	if perr != nil {
		return "", err
	}
	if !Within(filepath.Join(realExisting, rest), realRoot) {
		return "", ErrOutsideRoot
	}
	return "", err
}

// Within reports whether path is dir or lies beneath it, comparing the
// cleaned paths as written (no symlink is followed): both should be
// absolute.
func Within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}

// existingPrefix splits an absolute path into the longest leading part
// that exists (as the kernel resolves it, ".." and links included) and
// the rest.
func existingPrefix(path string) (existing, rest string) {
	parts := strings.Split(path, string(filepath.Separator))
	existing = string(filepath.Separator)
	for i, part := range parts {
		if part == "" {
			continue
		}
		// Joined by hand: filepath.Join would apply ".." lexically.
		next := strings.TrimSuffix(existing, string(filepath.Separator)) + string(filepath.Separator) + part
		if _, err := os.Lstat(next); err != nil {
			return existing, strings.Join(parts[i:], string(filepath.Separator))
		}
		existing = next
	}
	return existing, ""
}
