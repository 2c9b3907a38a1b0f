//go:build linux

package sandbox

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A sweep never removes a directory whose call is live, however it
// interleaves with the making of one: a directory it wins between mkdir
// and lock is given up by its maker for another. A sweeper that never
// stops, as here, may win all eight a maker tries (newCallTemp then says
// so); most makings must still succeed.
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
	var made atomic.Int32
	for range 4 {
		makers.Go(func() {
			for range 200 {
				ct, err := newCallTemp(base)
				if err != nil && strings.Contains(err.Error(), "was removed before it could be used") {
					continue // the sweeper won every try
				}
				if err != nil {
					t.Error(err)
					return
				}
				made.Add(1)
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
	if n := made.Load(); n < 400 {
		t.Errorf("%d of 800 call directories were made while a sweeper ran, want most", n)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("%d entries left behind", len(entries))
	}
}
