package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// HelperName is the file name of the sandbox helper, a small program of
// this module (cmd/basis-sandbox) that an unprivileged process starts in
// its stead to make a call's namespaces: it is found in the running
// binary's directory, and then the re-execution costs the start of a
// small binary instead of the running one's (the "as uid 65534" rows of
// e2e/BENCHMARKS.md). Without it, or where it may not be used, the running
// binary is re-executed as before: the helper changes what a call costs,
// never how it is confined.
const HelperName = trampoline.Name

// helper is the sandbox helper beside the running binary, found fit to
// start (sandboxHelper).
type helper struct {
	path string
	// id is what the probe's key holds of it: replaced or changed, it is
	// probed again.
	id []int64
	// dirs are the file and its directories, by device and inode: a call
	// that may write one of them does not start it.
	dirs map[fileID]bool
}

type fileID struct{ dev, ino uint64 }

// sandboxHelper is the helper beside the running binary, or why there is
// none fit to start.
var sandboxHelper = sync.OnceValues(func() (*helper, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return helperBeside(exe)
})

// helperBeside returns the helper in exe's directory when it is as much
// the operator's as exe is: a regular file of one link (no other name,
// perhaps in a writable directory, reaches it), executable and not
// set-user-ID or set-group-ID, owned by root or by exe's owner, as is
// each directory above it, none of which others may write (a directory
// with the sticky bit aside, whose entries only their owners may
// replace). exe is a resolved path (os.Executable), so no link is
// followed on the way. Otherwise it says why not; an error wrapping
// fs.ErrNotExist when there is none.
func helperBeside(exe string) (*helper, error) {
	path := filepath.Join(filepath.Dir(exe), HelperName)
	if !filepath.IsAbs(path) || path == exe {
		return nil, &fs.PathError{Op: "find the sandbox helper", Path: path, Err: fs.ErrNotExist}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(exe, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: exe, Err: err}
	}
	owner := st.Uid
	trusted := func(st *syscall.Stat_t) bool { return st.Uid == 0 || st.Uid == owner }
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "find the sandbox helper", Path: path, Err: err}
	}
	var why string
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		why = "is not a regular file"
	case st.Nlink != 1:
		why = "has another name (a hard link)"
	case st.Mode&0o022 != 0:
		why = "may be written by its group or others"
	case st.Mode&0o100 == 0:
		why = "is not executable"
	case st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0:
		why = "is set-user-ID or set-group-ID"
	case !trusted(&st):
		why = fmt.Sprintf("is owned by uid %d, neither root nor the owner of %s", st.Uid, exe)
	}
	if why != "" {
		return nil, fmt.Errorf("%s %s", path, why)
	}
	h := &helper{path: path, dirs: map[fileID]bool{{uint64(st.Dev), st.Ino}: true}, id: identity(&st)}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		switch err := syscall.Lstat(dir, &st); {
		case err != nil:
			return nil, &fs.PathError{Op: "lstat", Path: dir, Err: err}
		case st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
			return nil, fmt.Errorf("%s, above %s, is not a directory", dir, path)
		case !trusted(&st):
			return nil, fmt.Errorf("%s, above %s, is owned by uid %d, neither root nor the owner of %s", dir, path, st.Uid, exe)
		case st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0:
			return nil, fmt.Errorf("%s, above %s, may be written by its group or others", dir, path)
		}
		h.dirs[fileID{uint64(st.Dev), st.Ino}] = true
		if dir == "/" {
			return h, nil
		}
	}
}

// HelperStatus reports whether this process confines programs through
// the sandbox helper beside its binary ([HelperName]): the helper's path
// when it does. Otherwise path is "" and err says why not — one wrapping
// fs.ErrNotExist when there is no helper — or is nil when this process
// needs none (root makes the namespaces on a thread of its own; where
// the namespaces cannot be made there is nothing to start them). It
// probes the kernel first if this process has not. A call that may write
// the helper starts the running binary all the same.
func HelperStatus() (path string, err error) {
	sup := probe()
	if sup.abi < 1 || sup.threadNetns || !sup.netns || !mainCalled.Load() {
		return "", nil
	}
	h, err := sandboxHelper()
	switch {
	case err != nil:
		return "", err
	case !sup.helper:
		return "", fmt.Errorf("%s did not make the namespaces of a probe, which basis itself did: it is another build than basis, or broken; install the two from one version", h.path)
	case !h.unchanged():
		return "", fmt.Errorf("%s changed since this process probed it; a new process will use it", h.path)
	}
	return h.path, nil
}

// identity is what tells a file from the one it replaced or was before
// a write.
func identity(st *syscall.Stat_t) []int64 {
	return []int64{int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec}
}

// unchanged reports whether the helper is still the file the probe
// asked: one installed since (a newer basis's, which this process's
// requests would not match) is not started.
func (h *helper) unchanged() bool {
	var st syscall.Stat_t
	return syscall.Lstat(h.path, &st) == nil && slices.Equal(identity(&st), h.id)
}

// writableBy reports whether a program that may write beneath the
// directories write could change the helper: one of them is the file or
// a directory above it, by whatever path it was named.
func (h *helper) writableBy(write []string) bool {
	var st syscall.Stat_t
	for _, w := range write {
		if syscall.Stat(w, &st) == nil && h.dirs[fileID{uint64(st.Dev), st.Ino}] {
			return true
		}
	}
	return false
}

// key is what the probe's key holds of the helper.
func (h *helper) key() []byte {
	if h == nil {
		return []byte("-")
	}
	var b []byte
	for _, n := range h.id {
		b = append(strconv.AppendInt(b, n, 10), ' ')
	}
	return b
}

// selfPath re-executes the running binary: the kernel's link to what
// runs, which a rename or a write to its path does not change.
const selfPath = "/proc/self/exe"

// trampolinePath is what a call re-executes: the helper where the probe
// found it works, it is the file the probe asked and the call may not
// write it, else the running binary.
func trampolinePath(sup support, write []string) string {
	if h, _ := sandboxHelper(); sup.helper && h != nil && h.unchanged() && !h.writableBy(write) {
		return h.path
	}
	return selfPath
}
