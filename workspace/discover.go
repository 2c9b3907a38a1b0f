//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// SafeDirectoriesEnv lists workspace roots the operator trusts although
// another user owns their .basis directory, separated by colons; "*" trusts
// every one. It plays the part of git's safe.directory.
const SafeDirectoriesEnv = "BASIS_SAFE_DIRECTORIES"

// fileOwner tells who owns a file and which filesystem it is on. The real
// one stats the file; tests pass their own to play another user's
// directory or a mount point.
type fileOwner interface {
	// uid is the current user's.
	uid() int
	// owner is the uid that owns path; ok is false when it cannot be told.
	owner(path string) (uid int, ok bool)
	// device identifies the filesystem holding path.
	device(path string) (dev uint64, ok bool)
}

// ForeignWorkspaceError is [Open]'s refusal of a .basis directory that another
// user owns: its manifests name programs basis would run as the current
// user, so a directory someone else controls (a shared /tmp checkout, a
// mounted volume) is not trusted unless the operator says so.
type ForeignWorkspaceError struct {
	// Root is the directory holding .basis; Owner is the uid that owns
	// .basis.
	Root  string
	Owner int
}

// Error says whose the directory is and the two ways to trust it.
func (e *ForeignWorkspaceError) Error() string {
	return fmt.Sprintf("%s is owned by another user (uid %d), so basis does not load it: its tools would run as you. "+
		"If you trust it, name it exactly with -C %s, or add it to %s (directories separated by colons, or * for all)",
		filepath.Join(e.Root, ".basis"), e.Owner, e.Root, SafeDirectoriesEnv)
}

// findRoot walks up from cwd to the nearest directory holding .basis/, as
// git finds its repository. The walk ends, after checking it, at a
// directory holding .git (a repository's root is its workspace's edge),
// at $HOME, and at the filesystem's root; it never crosses onto another
// filesystem. With no .basis/ found, the workspace is cwd itself, holding
// no tools but spawn.
func findRoot(cwd string, getenv func(string) string, files fileOwner) (string, error) {
	home := getenv("HOME")
	if home != "" {
		home = filepath.Clean(home)
	}
	dir := filepath.Clean(cwd)
	dev, haveDev := files.device(dir)
	for {
		found, err := holdsBasis(dir, files, getenv)
		if err != nil {
			return "", err
		}
		if found {
			return dir, nil
		}
		if dir == home || exists(filepath.Join(dir, ".git")) {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		if pdev, ok := files.device(parent); !ok || !haveDev || pdev != dev {
			break
		}
		dir = parent
	}
	return filepath.Clean(cwd), nil
}

// holdsBasis reports whether dir holds a .basis directory the current user
// may use; one owned by another user is an error unless the operator
// listed dir in $BASIS_SAFE_DIRECTORIES.
func holdsBasis(dir string, files fileOwner, getenv func(string) string) (bool, error) {
	basis := filepath.Join(dir, ".basis")
	info, err := os.Stat(basis)
	if err != nil || !info.IsDir() {
		return false, nil
	}
	// An owner that cannot be told is not ours.
	if uid, ok := files.owner(basis); (!ok || uid != files.uid()) && !safeDirectory(dir, getenv) {
		if !ok {
			uid = -1
		}
		return false, &ForeignWorkspaceError{Root: dir, Owner: uid}
	}
	return true, nil
}

// safeDirectory reports whether the operator trusts dir although another
// user owns it.
func safeDirectory(dir string, getenv func(string) string) bool {
	list := getenv(SafeDirectoriesEnv)
	if list == "" {
		return false
	}
	return slices.ContainsFunc(strings.Split(list, ":"), func(entry string) bool {
		return entry == "*" || (filepath.IsAbs(entry) && filepath.Clean(entry) == dir)
	})
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist) && err == nil
}

// statOwner is the fileOwner of the running process.
type statOwner struct{}

func (statOwner) uid() int { return os.Getuid() }

func (statOwner) owner(path string) (int, bool) {
	st, ok := statOf(path)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func (statOwner) device(path string) (uint64, bool) {
	st, ok := statOf(path)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is narrower on some systems
}

func statOf(path string) (*syscall.Stat_t, bool) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return st, ok && st != nil
}
