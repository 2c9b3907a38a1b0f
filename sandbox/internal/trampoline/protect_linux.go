package trampoline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Protect moves the calling thread, which must be locked, never unlocked
// and hold CAP_SYS_ADMIN in its user namespace, into a mount namespace of
// its own in which every path of paths — and every other place the same
// file shows through another mount of its filesystem — is a read-only
// bind mount of itself. The namespace is made private first, so nothing
// propagates back to the host's. A program started from the thread
// inherits it and, without CAP_SYS_ADMIN and under Landlock (which denies
// mount, umount and remount), cannot undo it: writes beneath a protected
// path fail with EROFS, and renaming or removing it (a mount point) with
// EBUSY.
func Protect(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return &UnavailableError{Reason: "making a mount namespace to keep .git and the protected paths read-only: " + err.Error()}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the sandbox's mounts private: %w; the program did not run", err)
	}
	targets, err := withAliases(paths)
	if err != nil {
		return err
	}
	for _, p := range targets {
		if err := readOnly(p); err != nil {
			return err
		}
	}
	return nil
}

// readOnly bind-mounts p read-only onto itself. p is opened without
// following a symbolic link anywhere, and the mount is made and attached
// through descriptors (open_tree, mount_setattr, move_mount), so a path
// swapped by a concurrent program cannot redirect it; mount_setattr sets
// MOUNT_ATTR_RDONLY and keeps the other flags, which a mount in a user
// namespace may not drop (nosuid, nodev, noexec, atime).
func readOnly(p string) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil // gone since it was found: nothing to hold (see the README)
	case errors.Is(err, unix.ELOOP):
		return linkError(p)
	case err != nil:
		return fmt.Errorf("opening %s to keep it read-only: %w; the program did not run", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("opening %s to keep it read-only: %w; the program did not run", p, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return linkError(p)
	}
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return mountError(p, "open_tree", err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return mountError(p, "mount_setattr", err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return mountError(p, "move_mount", err)
	}
	return nil
}

func mountError(p, call string, err error) error {
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return &UnavailableError{Reason: fmt.Sprintf("%s is refused here (%v), so %s cannot be kept read-only", call, err, p)}
	}
	return fmt.Errorf("keeping %s read-only (%s): %w; the program did not run", p, call, err)
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	dev        string // major:minor
	root       string // the mounted directory, within its filesystem
	mountPoint string
}

// withAliases returns paths and every other path under which the same
// file shows, through another mount of its filesystem (a bind mount of a
// parent, say): Landlock grants writes by the inodes a path crosses, so
// such a path would be as writable as the first, and a read-only mount
// holds one path only.
func withAliases(paths []string) ([]string, error) {
	data, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w; the program did not run", err)
	}
	mounts := parseMountinfo(data)
	out := append([]string(nil), paths...)
	for _, p := range paths {
		p = cleanAbs(p)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		home := containing(mounts, p)
		if home == nil {
			continue
		}
		rel, _ := beneath(p, home.mountPoint)
		inFS := joinRel(home.root, rel) // p's path within its filesystem
		for _, m := range mounts {
			r, ok := beneath(inFS, m.root)
			if m.dev != home.dev || !ok {
				continue
			}
			alias := joinRel(m.mountPoint, r)
			var ast unix.Stat_t
			if alias == p || unix.Lstat(alias, &ast) != nil || ast.Dev != st.Dev || ast.Ino != st.Ino {
				continue
			}
			out = append(out, alias)
		}
	}
	return out, nil
}

// containing returns the mount p lies on: the last of the longest mount
// points p lies beneath (a later mount on the same point hides earlier
// ones).
func containing(mounts []mountEntry, p string) *mountEntry {
	var best *mountEntry
	for i := range mounts {
		m := &mounts[i]
		if within(p, m.mountPoint) && (best == nil || len(m.mountPoint) >= len(best.mountPoint)) {
			best = m
		}
	}
	return best
}

func parseMountinfo(data []byte) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		out = append(out, mountEntry{dev: f[2], root: unescapeMountinfo(f[3]), mountPoint: unescapeMountinfo(f[4])})
	}
	return out
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// linkError refuses a protected path that is a symbolic link, or is
// reached through one inside a writable directory: the mount that holds
// a path read-only holds what the link points to, not the link, and the
// program could replace the link.
func linkError(path string) error {
	return &UnavailableError{Reason: path + " is a symbolic link (or is reached through one) inside a directory the program may write; " +
		"the sandbox keeps it read-only with a mount, which holds what a link points to but not the link itself: replace the link by what it points to"}
}

// within reports whether path is limit or lies beneath it, lexically;
// both are clean absolute paths (the sandbox's, and the kernel's mount
// table).
func within(path, limit string) bool {
	return path == limit || limit == "/" || strings.HasPrefix(path, limit+"/")
}

// beneath returns path relative to root ("." for root itself) when it is
// root or lies beneath it, lexically; both clean and absolute.
func beneath(path, root string) (string, bool) {
	switch {
	case path == root:
		return ".", true
	case !within(path, root):
		return "", false
	case root == "/":
		return path[1:], true
	}
	return path[len(root)+1:], true
}

// joinRel is dir joined with rel, a relative path beneath returned.
func joinRel(dir, rel string) string {
	switch {
	case rel == ".":
		return dir
	case dir == "/":
		return "/" + rel
	}
	return dir + "/" + rel
}

// cleanAbs is filepath.Clean of an absolute path p (path/filepath's
// initialisation would come late: see the package's doc); a relative p is
// returned as is, and lies beneath no mount.
func cleanAbs(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	var parts []string
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, e)
		}
	}
	return "/" + strings.Join(parts, "/")
}
