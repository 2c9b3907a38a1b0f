//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/sandbox"
	"golang.org/x/sys/unix"
)

// maxLinkHops bounds the symlinks followed while opening the audit file,
// as the kernel bounds its own (ELOOP after 40).
const maxLinkHops = 40

// OpenAudit opens the audit file path (relative to [Options.Dir]) for
// appending, creating it (0600) when it is missing, for a runtime's
// Audit; the caller closes it.
//
// Inside a directory the programs the workspace starts may write, a
// program could replace any part of the path with a symlink to a file of
// the operator's, and the audit would then append a call's subject — text
// a model chose — to that file. So there no symlink is followed and the
// file must be a regular file with one link; outside them the path
// resolves as usual (operators link their home directories). Open the file
// once, for the whole run: a link planted after that changes nothing,
// since every record goes to the descriptor.
func (w *Workspace) OpenAudit(path string) (*os.File, error) {
	if w.sandboxErr != nil {
		return nil, w.sandboxErr
	}
	roots, err := w.writableRoots()
	if err != nil {
		return nil, err
	}
	return openAuditFile(absFrom(w.dir, path), roots)
}

// writableRoots lists, with symlinks resolved, the directories a
// sandboxed program may write: the workspace (a cloned repository can
// hold symlinks of its own, so it counts with the sandbox off too) and
// what the sandbox of spawn, of the default and of every tool the
// sandbox files name grants. A program whose sandbox is off is left out:
// it can write whatever the operator can, so a link it plants reaches
// nothing it could not write itself.
func (w *Workspace) writableRoots() ([]string, error) {
	sbs := w.sandboxes
	// The default policy is that of a tool no file names: "" is no
	// tool's name.
	tools := []string{"", sandbox.SpawnTool}
	for _, c := range []*sandbox.Config{sbs.operator, sbs.workspace} {
		if c != nil {
			for name := range c.Tools {
				tools = append(tools, name)
			}
		}
	}
	roots := []string{resolvePath(w.root)}
	for _, tool := range tools {
		p := sbs.policy(tool, false)
		if effectiveMode(p.Mode) == sandbox.Off {
			continue
		}
		sb, err := sandbox.New(p, w.root)
		if err != nil {
			return nil, err
		}
		for _, dir := range sb.Describe("").Write {
			if dir != sandbox.TempDirPlaceholder {
				roots = append(roots, resolvePath(dir))
			}
		}
	}
	slices.Sort(roots)
	return slices.Compact(roots), nil
}

func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// rootOf returns the root dir lies in (or is), or "".
func rootOf(dir string, roots []string) string {
	for _, r := range roots {
		if dir == r || r == "/" || strings.HasPrefix(dir, r+"/") {
			return r
		}
	}
	return ""
}

// openAuditFile opens path (absolute) for appending, walking it one
// component at a time from /. A component whose directory lies in one of
// roots (absolute, symlinks resolved) is opened without following a
// symlink, and a symlink there is refused; elsewhere a symlink is read
// and its target walked the same way, so a link outside the roots that
// points into one is held to the same rule inside it. The final
// component, inside a root, must be a regular file with one link (or
// missing: it is created); it is opened non-blocking, so a FIFO planted
// there never holds basis up.
func openAuditFile(path string, roots []string) (*os.File, error) {
	rest := components(path)
	if len(rest) == 0 {
		return nil, errors.New("is a directory; name a file")
	}
	dir, err := unix.Open("/", dirFlags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	defer func() { unix.Close(dir) }()
	cur, hops := "/", 0
	// enter makes fd, the directory at real path p, the current one.
	enter := func(fd int, p string) {
		unix.Close(dir)
		dir, cur = fd, p
	}
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		last := len(rest) == 0
		here := filepath.Join(cur, name)
		root := rootOf(cur, roots)
		switch name {
		case ".", "..":
			if last {
				return nil, errors.New("is a directory; name a file")
			}
			if name == ".." {
				fd, err := unix.Openat(dir, "..", dirFlags, 0)
				if err != nil {
					return nil, &os.PathError{Op: "open", Path: filepath.Dir(cur), Err: err}
				}
				enter(fd, filepath.Dir(cur))
			}
			continue
		}
		var st unix.Stat_t
		err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		missing := errors.Is(err, unix.ENOENT)
		if err != nil && !(missing && last) {
			return nil, &os.PathError{Op: "open", Path: here, Err: err}
		}
		if !missing && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if root != "" {
				return nil, fmt.Errorf("%s is a symbolic link inside %s, a directory the programs basis starts may write, "+
					"where basis follows no link (a program could point it at any file of yours); "+
					"give the audit file's real path, or keep the audit file outside %s", here, root, root)
			}
			if hops++; hops > maxLinkHops {
				return nil, &os.PathError{Op: "open", Path: path, Err: unix.ELOOP}
			}
			if onProcfs(dir) {
				// /proc's links (/dev/stderr is /proc/self/fd/2) name
				// no path to walk: the kernel follows them to what this
				// process already has open.
				if last {
					return openFinal(dir, name, path, "", false)
				}
				fd, err := unix.Openat(dir, name, dirFlags, 0)
				if err != nil {
					return nil, &os.PathError{Op: "open", Path: here, Err: err}
				}
				real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
				if err != nil {
					unix.Close(fd)
					return nil, err
				}
				enter(fd, real)
				continue
			}
			target, err := readlinkat(dir, name)
			if err != nil {
				return nil, &os.PathError{Op: "readlink", Path: here, Err: err}
			}
			if filepath.IsAbs(target) {
				fd, err := unix.Open("/", dirFlags, 0)
				if err != nil {
					return nil, &os.PathError{Op: "open", Path: "/", Err: err}
				}
				enter(fd, "/")
			}
			rest = append(components(target), rest...)
			continue
		}
		if last {
			if !missing {
				if err := checkFinal(&st, here, root); err != nil {
					return nil, err
				}
			}
			return openFinal(dir, name, here, root, true)
		}
		fd, err := unix.Openat(dir, name, dirFlags|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: here, Err: err}
		}
		enter(fd, here)
	}
	return nil, errors.New("is a directory; name a file")
}

// components splits a path into its names; an absolute path's leading /
// is the walk's starting point, not a name.
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// checkFinal refuses, inside a root, what a program could have put at the
// audit file's name to make the append land elsewhere or hang: anything
// but a regular file, and a file with another name somewhere (a hard
// link to a file of the operator's).
func checkFinal(st *unix.Stat_t, here, root string) error {
	if root == "" {
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return errors.New("is a directory; name a file")
		}
		return nil
	}
	inside := "inside " + root + ", a directory the programs basis starts may write"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return fmt.Errorf("%s has %d hard links and lies %s (a program could have linked another file of yours there); "+
				"remove it and let basis create it, or keep the audit file outside %s", here, st.Nlink, inside, root)
		}
		return nil
	case unix.S_IFDIR:
		return fmt.Errorf("%s is a directory; name a file", here)
	}
	return fmt.Errorf("%s is a %s %s, not a regular file; remove it and let basis create the file, or keep the audit file outside %s",
		here, fileKind(uint32(st.Mode)), inside, root)
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "named pipe (FIFO)"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFSOCK:
		return "socket"
	}
	return "special file"
}

// openFinal opens the audit file's last component for appending. Inside
// a root it follows no link, blocks on nothing and gets no controlling
// terminal, and what it opened is checked again: the name may have
// changed since it was looked at.
func openFinal(dir int, name, here, root string, nofollow bool) (*os.File, error) {
	flags := unix.O_WRONLY | unix.O_APPEND | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NOCTTY
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	if root != "" {
		flags |= unix.O_NONBLOCK
	}
	fd, err := unix.Openat(dir, name, flags, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) && root != "" {
			return nil, fmt.Errorf("%s became a symbolic link while basis opened it, inside %s; remove it, or keep the audit file outside %s", here, root, root)
		}
		return nil, &os.PathError{Op: "open", Path: here, Err: err}
	}
	if root != "" {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "stat", Path: here, Err: err}
		}
		if err := checkFinal(&st, here, root); err != nil {
			unix.Close(fd)
			return nil, err
		}
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "open", Path: here, Err: err}
		}
	}
	return os.NewFile(uintptr(fd), here), nil
}
