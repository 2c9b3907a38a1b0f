package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirWatch tells the search which remembered listings are still
// current, from the kernel's inotify events, so that a search of an
// unchanged tree looks up none of its directories: only the writable
// directories themselves are looked up, to confirm each still names the
// directory that was read. Each directory is watched before it is read,
// so a change made while it is read is reported too. The kernel queues
// an event in the same system call that makes, removes or renames an
// entry, whoever makes it; the events are read at the start of every
// search. A mount over a directory reports nothing, but only a
// privileged process in basis's own mount namespace can make one there.
//
// The process's listings have one inotify instance (a user may have only
// 128), watching at most maxWatched directories (each takes kernel
// memory the user's limit counts); beyond them, and where the kernel
// offers no inotify, a listing is checked by its stamp as before. Its
// owner's lock guards it.
type dirWatch struct {
	fd    int
	paths map[int32][]string // a watch's directories, by descriptor
	wds   map[string]int32   // a directory's watch
}

// maxWatched bounds the directories a process watches.
const maxWatched = 2048

// watchMask is what changes a directory's listing: an entry made,
// removed or renamed in or out, and the directory itself removed or
// moved.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// newDirWatch returns a watch, or nil where the kernel offers none.
func newDirWatch() *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &dirWatch{fd: fd, paths: map[int32][]string{}, wds: map[string]int32{}}
}

// close ends the watch and every watch it holds; a second close does
// nothing.
func (w *dirWatch) close() {
	if w != nil && w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

// watchDir watches dir, about to be read; false when it is not watched
// (no inotify here, the bound reached, or the kernel refused).
func (w *dirWatch) watchDir(dir string) bool {
	if w == nil {
		return false
	}
	if _, held := w.wds[dir]; !held && len(w.wds) >= maxWatched {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return false
	}
	id := int32(wd)
	if old, held := w.wds[dir]; held && old != id {
		w.forget(dir, old) // dir names another directory now
	}
	w.wds[dir] = id
	if !slices.Contains(w.paths[id], dir) {
		w.paths[id] = append(w.paths[id], dir)
	}
	return true
}

// forget stops counting dir as watched by wd, and removes the watch
// once it watches nothing the search remembers.
func (w *dirWatch) forget(dir string, wd int32) {
	w.paths[wd] = slices.DeleteFunc(w.paths[wd], func(p string) bool { return p == dir })
	if len(w.paths[wd]) == 0 {
		delete(w.paths, wd)
		_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
	}
}

// drain reads every event queued since the last drain and reports the
// listings they make stale to stale: the directory an entry changed in,
// and, when the entry is a directory or the watched directory itself
// moved or went, every listing at or beneath that path (subtree). After
// an event was lost (the queue overflowed), or where the events cannot be
// read, all returns true: no listing may be trusted.
func (w *dirWatch) drain(stale func(path string, subtree bool)) (all bool) {
	if w == nil {
		return false
	}
	var buf [16 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		switch {
		case err == unix.EAGAIN:
			return all // nothing more queued
		case err != nil || n <= 0:
			return true // the events cannot be read: trust nothing
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameStart := off + unix.SizeofInotifyEvent
			nameEnd := nameStart + int(ev.Len)
			if nameEnd > n {
				return true // a torn event: trust nothing
			}
			name := strings.TrimRight(string(buf[nameStart:nameEnd]), "\x00")
			off = nameEnd
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				all = true
				continue
			}
			// stale may forget a directory of this watch: range over a
			// copy.
			for _, dir := range slices.Clone(w.paths[ev.Wd]) {
				switch {
				case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
					stale(dir, true)
				case name != "":
					stale(dir, false)
					if ev.Mask&unix.IN_ISDIR != 0 {
						stale(filepath.Join(dir, name), true)
					}
				default:
					stale(dir, false)
				}
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				// The kernel removed the watch (its directory went).
				for _, dir := range w.paths[ev.Wd] {
					if w.wds[dir] == ev.Wd {
						delete(w.wds, dir)
					}
				}
				delete(w.paths, ev.Wd)
			}
		}
	}
}

// unwatch stops watching dir (its listing is no longer remembered).
func (w *dirWatch) unwatch(dir string) {
	if w == nil {
		return
	}
	if wd, held := w.wds[dir]; held {
		delete(w.wds, dir)
		w.forget(dir, wd)
	}
}
