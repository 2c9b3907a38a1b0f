//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
)

// BenchmarkSandboxedCat runs /bin/cat with a small payload, plain and
// sandboxed, alternating in the same loop so both see the same machine;
// it reports the ratio of their mean times (the target is ≤ 1.15).
func BenchmarkSandboxedCat(b *testing.B) {
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	sb, err := sandbox.New(sandbox.Policy{Network: os.Getenv("BENCH_NET") != ""}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte(strings.Repeat(`{"path": "a"}`, 64))
	run := func(confine bool) time.Duration {
		cmd := exec.Command("/bin/cat")
		cmd.Env = []string{}
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		release := func() {}
		if confine {
			if release, err = sb.Prepare(cmd); err != nil {
				b.Fatal(err)
			}
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		release()
		d := time.Since(start)
		if !bytes.Equal(out.Bytes(), payload) {
			b.Fatal("cat did not echo its input")
		}
		return d
	}
	var plain, confined time.Duration
	for b.Loop() {
		plain += run(false)
		confined += run(true)
	}
	b.ReportMetric(float64(plain.Microseconds())/float64(b.N), "plain-µs/op")
	b.ReportMetric(float64(confined.Microseconds())/float64(b.N), "sandboxed-µs/op")
	b.ReportMetric(float64(confined)/float64(plain), "ratio")
}
