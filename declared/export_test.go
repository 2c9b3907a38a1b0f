//go:build unix

package declared

import "time"

// SettleFileHashes makes files hashed from now on count as changed long
// ago, as a program built in the workspace some time before is, until the
// returned function restores the clock: the cache's steady state, for
// benchmarks.
func SettleFileHashes() (restore func()) {
	fileHashes.mu.Lock()
	defer fileHashes.mu.Unlock()
	old := fileHashes.now
	fileHashes.now = func() time.Time { return time.Now().Add(time.Hour) }
	return func() {
		fileHashes.mu.Lock()
		defer fileHashes.mu.Unlock()
		fileHashes.now = old
	}
}
