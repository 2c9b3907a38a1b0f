package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
)

// BenchmarkWatch runs a sandboxed program that succeeds (/bin/true) and
// one that fails a refused write (sh writing outside the workspace),
// with Prepare and with a Watch, alternating in the same loop so both see
// the same machine, with the kernel's audit off and on. It reports each
// one's median and the ratio Watch / Prepare of the medians: what a call
// pays for naming what the kernel refused.
func BenchmarkWatch(b *testing.B) {
	if os.Getenv("BASIS_TEST_AUDIT") != "1" {
		b.Skip("sets the kernel's audit for the whole machine; run alone with BASIS_TEST_AUDIT=1")
	}
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	for _, audit := range []bool{false, true} {
		name := map[bool]string{false: "audit off", true: "audit on"}[audit]
		for _, fails := range []bool{false, true} {
			b.Run(name+map[bool]string{false: ", success", true: ", refused write"}[fails], func(b *testing.B) {
				restore, err := sandbox.SetAudit(audit)
				if err != nil {
					b.Skipf("cannot set the kernel's audit: %v", err)
				}
				defer restore()
				ws := b.TempDir()
				target := filepath.Join(b.TempDir(), "x")
				sb, err := sandbox.New(sandbox.Policy{}, ws)
				if err != nil {
					b.Fatal(err)
				}
				run := func(watch bool) time.Duration {
					cmd := exec.Command("/bin/true")
					if fails {
						cmd = exec.Command("/bin/sh", "-c", `echo > "$0"`, target)
					}
					cmd.Dir = ws
					began := time.Now()
					prepare := sb.Prepare
					if watch {
						prepare = sb.Watch().Prepare
					}
					start, release, err := prepare(cmd)
					if err != nil {
						b.Fatal(err)
					}
					if err := start(); err != nil {
						b.Fatal(err)
					}
					_ = cmd.Wait()
					release()
					return time.Since(began)
				}
				var plain, watched []time.Duration
				for i := 0; b.Loop(); i++ {
					// Alternating which goes first: the second of a pair
					// pays for what the first left behind.
					if i%2 == 0 {
						plain = append(plain, run(false))
						watched = append(watched, run(true))
					} else {
						watched = append(watched, run(true))
						plain = append(plain, run(false))
					}
				}
				slices.Sort(plain)
				slices.Sort(watched)
				p, w := plain[len(plain)/2], watched[len(watched)/2]
				b.ReportMetric(float64(p.Microseconds()), "prepare-µs")
				b.ReportMetric(float64(w.Microseconds()), "watch-µs")
				b.ReportMetric(float64(w)/float64(p), "ratio")
			})
		}
	}
}
