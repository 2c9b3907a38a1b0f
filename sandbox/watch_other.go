//go:build unix && !linux

package sandbox

// dirWatch is not offered on this system: listings are checked by their
// stamps (and the sandbox does not run programs here anyway).
type dirWatch struct{}

func newDirWatch() *dirWatch                                   { return nil }
func (w *dirWatch) close()                                     {}
func (w *dirWatch) watchDir(string) bool                       { return false }
func (w *dirWatch) drain(func(path string, subtree bool)) bool { return false }
func (w *dirWatch) unwatch(string)                             {}
