//go:build unix && !linux

package subprocess

import "os"

// smallStdin is 0: elsewhere stdin is always written by a goroutine.
const smallStdin = 0

// pipe is os.Pipe, parent end first.
func pipe(parentReads bool) (parent, child *os.File, err error) {
	r, w, err := os.Pipe()
	if parentReads {
		return r, w, err
	}
	return w, r, err
}

// filledPipe is never called where smallStdin is 0.
func filledPipe([]byte) (*os.File, error) { panic("subprocess: filledPipe without smallStdin") }
