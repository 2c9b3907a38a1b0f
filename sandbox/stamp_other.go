//go:build unix && !linux

package sandbox

import (
	"io/fs"
	"time"
)

// fileStamp is not kept on this system: every search reads every
// directory (and the sandbox does not run programs here anyway).
type fileStamp struct{}

func stampOf(fs.FileInfo) (fileStamp, bool) { return fileStamp{}, false }

func stampSettled(fileStamp, time.Time) bool { return false }

func (fileStamp) sameFile(fileStamp) bool { return false }
