//go:build unix

package sandbox

import "time"

// SettleEveryChangeTime moves the clock the search for protected paths
// reads a minute on, until restore is called: every change time then
// counts as settled, and the search remembers what it reads, as it does in
// a workspace that changed more than two seconds ago.
func SettleEveryChangeTime() (restore func()) {
	real := clock
	clock = func() time.Time { return real().Add(time.Minute) }
	return func() { clock = real }
}
