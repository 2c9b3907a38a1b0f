//go:build unix

package subprocess_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

var benchPayload = []byte(`{"job":"deploy","params":{"branch":"main","dry_run":true}}`)

// runCat gives the child the same environment exec.Command would (this
// process's), so the two differ only in how they run it.
func runCat(b *testing.B) {
	res, err := subprocess.Run(context.Background(), &subprocess.Cmd{Argv: []string{"/bin/cat"}, Env: os.Environ(), Stdin: benchPayload, Timeout: 10 * time.Second})
	if err != nil || !res.Outcome.Success() || !bytes.Equal(res.Stdout, benchPayload) {
		b.Fatalf("Run: %v %v", err, res)
	}
}

// bareCat is the baseline: /bin/cat through a plain exec.Command, in a
// new session as Run starts every program (newSession false: as
// exec.Command does by default).
func bareCat(b *testing.B, newSession bool) {
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = bytes.NewReader(benchPayload)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: newSession}
	if err := cmd.Run(); err != nil || !bytes.Equal(out.Bytes(), benchPayload) {
		b.Fatalf("exec: %v", err)
	}
}

// BenchmarkRun runs /bin/cat with a small payload through Run.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		runCat(b)
	}
}

// BenchmarkBareExec is the baseline: the same program and payload through a
// plain exec.Command, in a new session.
func BenchmarkBareExec(b *testing.B) {
	for b.Loop() {
		bareCat(b, true)
	}
}

// BenchmarkRunOverBareExec alternates Run, the baseline, and exec.Command
// without a new session, call by call, so all see the same machine load,
// and reports the median of each. "overhead-%" (Run over the baseline) is
// the figure the module README quotes; "session-%" is what the new
// session itself costs (the kernel's work, which Run cannot avoid), and
// "over-plain-%" is Run over exec.Command without one.
func BenchmarkRunOverBareExec(b *testing.B) {
	var ours, bare, plain []time.Duration
	for b.Loop() {
		t0 := time.Now()
		runCat(b)
		t1 := time.Now()
		bareCat(b, true)
		t2 := time.Now()
		bareCat(b, false)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, t2.Sub(t1))
		plain = append(plain, time.Since(t2))
	}
	mo, mb, mp := median(ours), median(bare), median(plain)
	b.ReportMetric(float64(mo.Microseconds()), "run-µs/op")
	b.ReportMetric(float64(mb.Microseconds()), "bare-µs/op")
	b.ReportMetric(100*(float64(mo)/float64(mb)-1), "overhead-%")
	b.ReportMetric(100*(float64(mb)/float64(mp)-1), "session-%")
	b.ReportMetric(100*(float64(mo)/float64(mp)-1), "over-plain-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
