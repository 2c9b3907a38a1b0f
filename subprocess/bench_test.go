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

// BenchmarkBareExecNoSession is exec.Command as it starts a program by
// default, in this process's session: beside BenchmarkBareExec, what a new
// session costs the kernel. (Not alternated with it: a session's teardown
// is deferred work that lands on whatever runs next.)
func BenchmarkBareExecNoSession(b *testing.B) {
	for b.Loop() {
		bareCat(b, false)
	}
}

// BenchmarkRunOverBareExec alternates Run and the baseline, call by call,
// so both see the same machine load (and each the teardown of the other's
// session), and reports the median of each and their ratio. "overhead-%"
// is the figure the module README quotes.
func BenchmarkRunOverBareExec(b *testing.B) {
	var ours, bare []time.Duration
	for b.Loop() {
		t0 := time.Now()
		runCat(b)
		t1 := time.Now()
		bareCat(b, true)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	mo, mb := median(ours), median(bare)
	b.ReportMetric(float64(mo.Microseconds()), "run-µs/op")
	b.ReportMetric(float64(mb.Microseconds()), "bare-µs/op")
	b.ReportMetric(100*(float64(mo)/float64(mb)-1), "overhead-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
