//go:build unix

package subprocess

import "time"

// StallReaders holds every output reader of the next runs before its
// first read until Run has set the drain deadline, and sets that deadline
// window after the group kill (negative: already passed). It returns the
// function that undoes it. Not for parallel tests.
func StallReaders(window time.Duration) (restore func()) {
	release := make(chan struct{})
	testHookReaderStart = func() { <-release }
	testHookDrainDeadline = func() { close(release) }
	before := drainWindow
	drainWindow = window
	return func() {
		testHookReaderStart, testHookDrainDeadline = nil, nil
		drainWindow = before
	}
}
