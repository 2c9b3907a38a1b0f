//go:build unix && !linux

package sandbox

import (
	"io/fs"
	"time"
)

// dirStamp is not kept on this system: every search reads every
// directory (and the sandbox does not run programs here anyway).
type dirStamp struct{}

func stampOf(fs.FileInfo) (dirStamp, bool) { return dirStamp{}, false }

func stampSettled(dirStamp, time.Time) bool { return false }
