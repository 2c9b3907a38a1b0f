package sandbox

import (
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

// sandboxHelper is the helper beside the running binary, nil when there is
// none fit to start.
var sandboxHelper = sync.OnceValue(func() *helper {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return helperBeside(exe)
})

// helperBeside returns the helper in exe's directory when it is as much
// the operator's as exe is: a regular file of one link (no other name,
// perhaps in a writable directory, reaches it), executable and not
// set-user-ID or set-group-ID, owned by root or by exe's owner, as is each directory above it, none of which others
// may write (a directory with the sticky bit aside, whose entries only
// their owners may replace). exe is a resolved path (os.Executable), so
// no link is followed on the way.
func helperBeside(exe string) *helper {
	path := filepath.Join(filepath.Dir(exe), HelperName)
	if !filepath.IsAbs(path) || path == exe {
		return nil
	}
	var st syscall.Stat_t
	if syscall.Stat(exe, &st) != nil {
		return nil
	}
	owner := st.Uid
	trusted := func(st *syscall.Stat_t) bool { return st.Uid == 0 || st.Uid == owner }
	if syscall.Lstat(path, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 ||
		st.Mode&0o022 != 0 || st.Mode&0o100 == 0 || st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 || !trusted(&st) {
		return nil
	}
	h := &helper{path: path, dirs: map[fileID]bool{{uint64(st.Dev), st.Ino}: true}, id: identity(&st)}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if syscall.Lstat(dir, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR || !trusted(&st) ||
			st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0 {
			return nil
		}
		h.dirs[fileID{uint64(st.Dev), st.Ino}] = true
		if dir == "/" {
			return h
		}
	}
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
	if h := sandboxHelper(); sup.helper && h != nil && h.unchanged() && !h.writableBy(write) {
		return h.path
	}
	return selfPath
}
