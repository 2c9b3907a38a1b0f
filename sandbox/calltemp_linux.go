package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// callTemp is a call's temporary directory, held with a shared flock on
// an open descriptor for as long as the call lives. The lock is what lets
// a later process tell a directory whose call is over — its process was
// killed, or exited before release — from a live one: the kernel drops it
// with the process, whatever ended it. Left behind, such directories
// cost every later sandboxed start (the sandbox lists /dev/shm to hide
// them, and a tmpfs directory of hundreds of entries is slow to list and
// to add to), and hold the memory of what their programs wrote.
type callTemp struct {
	path string
	fd   int
	// uid and gid are the user and group it was made for: this process's
	// effective ones when it was made.
	uid, gid int
	removed  sync.Once
}

// newCallTemp makes and locks a fresh directory in base. A directory
// swept by another process between its mkdir and its lock is given up
// for another name.
func newCallTemp(base string) (*callTemp, error) {
	sweepCallTemps(base)
	made := func(path string, fd int) *callTemp {
		return &callTemp{path: path, fd: fd, uid: os.Geteuid(), gid: os.Getegid()}
	}
	for range 8 {
		path, err := os.MkdirTemp(base, callTempPrefix)
		if err != nil {
			return nil, err
		}
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // swept before it was opened
		}
		switch err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); {
		case err == nil:
			// A sweeper that locked it first may have removed it and let
			// go since: only a directory still there is this call's.
			if _, ok := stillThere(path, fd); ok {
				return made(path, fd), nil
			}
			unix.Close(fd)
		case errors.Is(err, unix.EWOULDBLOCK):
			unix.Close(fd) // a sweeper holds it and removes it
		default:
			// A filesystem without flock: the directory is not swept if
			// left behind (a sweeper cannot lock it either), but works.
			return made(path, fd), nil
		}
	}
	return nil, fmt.Errorf("every directory made in %s was removed before it could be used", base)
}

// stillThere reports whether path is the directory fd is open on, and
// returns what fstat says of it.
func stillThere(path string, fd int) (unix.Stat_t, bool) {
	var byPath, byFD unix.Stat_t
	ok := unix.Lstat(path, &byPath) == nil && unix.Fstat(fd, &byFD) == nil &&
		byPath.Dev == byFD.Dev && byPath.Ino == byFD.Ino
	return byFD, ok
}

// remove removes the directory, then lets go of its lock; only the first
// call does anything.
func (t *callTemp) remove() {
	t.removed.Do(func() {
		_ = os.RemoveAll(t.path)
		unix.Close(t.fd)
	})
}

// sweepCallTemps removes, once per process and base, the call
// directories in base that this user left behind: those no process holds
// locked. Only directories owned by this process's effective user are
// touched, and nothing is followed through a symbolic link.
func sweepCallTemps(base string) {
	once, ok := sweptBases.Load(base)
	if !ok {
		once, _ = sweptBases.LoadOrStore(base, new(sync.Once))
	}
	once.(*sync.Once).Do(func() { sweepNow(base) })
}

var sweptBases sync.Map // base → *sync.Once

func sweepNow(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	euid := uint32(os.Geteuid())
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), callTempPrefix) {
			continue
		}
		path := filepath.Join(base, e.Name())
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Uid == euid && unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = os.RemoveAll(path)
		}
		unix.Close(fd)
	}
}
