package sandbox

import (
	"io/fs"
	"syscall"
	"time"
)

// fileStamp identifies a file's state (a directory's, a git config's):
// device, inode, change time.
type fileStamp struct {
	dev, ino        uint64
	ctimeS, ctimeNs int64
}

// stampOf returns fi's stamp; false when the system does not say.
func stampOf(fi fs.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{dev: uint64(st.Dev), ino: uint64(st.Ino), ctimeS: int64(st.Ctim.Sec), ctimeNs: int64(st.Ctim.Nsec)}, true
}

// stampSettled reports whether a listing read at now may be kept: its
// change time lies two seconds or more in the past, beyond any
// filesystem clock's tick.
func stampSettled(s fileStamp, now time.Time) bool {
	return time.Unix(s.ctimeS, s.ctimeNs).Before(now.Add(-2 * time.Second))
}

// sameFile reports whether s and t are stamps of the same file.
func (s fileStamp) sameFile(t fileStamp) bool { return s.dev == t.dev && s.ino == t.ino }
