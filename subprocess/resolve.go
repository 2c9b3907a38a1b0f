//go:build unix

package subprocess

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// resolveDir returns the absolute directory a run happens in: dir relative
// to root, root itself when dir is empty, and the process's own working
// directory when both are.
func resolveDir(root, dir string) (string, error) {
	switch {
	case dir == "" && root == "":
		return os.Getwd()
	case dir == "":
		dir = root
	case !filepath.IsAbs(dir) && root != "":
		dir = filepath.Join(root, dir)
	}
	return filepath.Abs(dir)
}

// ResolveProgram finds the file Run would execute for argv[0] name: a
// name with a directory part is relative to root; a bare name is looked up
// in the PATH of env (this process's PATH when env has none), skipping
// empty and relative entries and files without an execute bit. A caller
// that shows an approver what will run resolves with it and passes the
// absolute path it returns as argv[0], so what was shown is what starts.
// The error is a *[StartError] that never quotes the name.
func ResolveProgram(name, root string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) && root != "" {
			name = filepath.Join(root, name)
		}
		return filepath.Abs(name)
	}
	path, ok := LookupEnv(env, "PATH")
	if !ok {
		path = os.Getenv("PATH")
	}
	var denied error
	for _, dir := range filepath.SplitList(path) {
		// An empty or relative PATH entry would find programs relative to
		// wherever the run happens to be: never a program anyone declared.
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		candidate := filepath.Join(dir, name)
		info, err := os.Stat(candidate)
		if err != nil || info.IsDir() {
			continue
		}
		if info.Mode().Perm()&0o111 == 0 {
			denied = syscall.EACCES
			continue
		}
		return candidate, nil
	}
	if denied != nil {
		return "", &StartError{Op: "look up program", Err: denied}
	}
	return "", &StartError{Op: "look up program", Err: ErrNotFound}
}

// checkDir makes a missing working directory its own reason.
// (os.StartProcess reports a failed chdir as if the program were
// missing.)
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.ENOENT
		}
		return &StartError{Op: "enter working directory", Err: errno}
	}
	if !info.IsDir() {
		return &StartError{Op: "enter working directory", Err: syscall.ENOTDIR}
	}
	return nil
}

// startError turns what os.StartProcess said into a reason without the
// program's path.
func startError(program string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &StartError{Op: "start program", Err: err}
	}
	// execve says ENOENT both for a missing program and for a missing #!
	// interpreter; the second is worth telling apart.
	if errno == syscall.ENOENT && hasShebang(program) {
		return &StartError{Op: "start program", Err: ErrBadInterpreter}
	}
	return &StartError{Op: "start program", Err: errno}
}

func hasShebang(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode().IsRegular() && bytes.Equal(head, []byte("#!"))
}
