//go:build linux

package sandbox

import (
	"os"
	"sync"
	"testing"
)

// A sweep never removes a directory whose call is live, however it
// interleaves with the making of one: a directory it wins between mkdir
// and lock is given up by its maker for another.
func TestSweepSparesLiveCallDirectories(t *testing.T) {
	base := t.TempDir()
	stop := make(chan struct{})
	var sweeper sync.WaitGroup
	sweeper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				sweepNow(base)
			}
		}
	})
	var makers sync.WaitGroup
	for range 4 {
		makers.Go(func() {
			for range 200 {
				ct, err := newCallTemp(base)
				if err != nil {
					t.Error(err)
					return
				}
				if err := os.WriteFile(ct.path+"/f", nil, 0o600); err != nil {
					t.Errorf("a held call directory was removed: %v", err)
				}
				ct.remove()
				ct.remove() // a second release does nothing (its descriptor is not closed twice)
			}
		})
	}
	makers.Wait()
	close(stop)
	sweeper.Wait()
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("%d entries left behind", len(entries))
	}
}
