//go:build linux

package e2e_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBasisCallUnprivileged is BenchmarkBasisCallOverDirect as uid
// 65534 (run as root, it starts both as that user), where the sandbox's
// namespaces are made by re-executing basis (the trampoline). It
// alternates three runs: a `basis call` as a user's second and later
// calls make it, the probe of the namespaces remembered from an earlier
// process; the same call with that record removed first, as every call
// probed before ("probing"); and /bin/cat directly. It reports each
// median, basis over /bin/cat ("ratio", "probing-ratio") and the
// remembered call over the probing one ("over-probing").
func BenchmarkBasisCallUnprivileged(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("run as root, which starts the calls as uid 65534")
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "basis-bench-unprivileged-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "basis")
	copyExecutable(b, basisBinary, bin)
	home, cfg := filepath.Join(dir, "home"), filepath.Join(dir, "config")
	for _, d := range []string{home, cfg} {
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.Chown(d, nobody, nobody); err != nil {
			b.Fatal(err)
		}
	}
	// The checked-in workspace, whose listings are settled; as another
	// user's, it is loaded only when named exactly, as -C does.
	ws := settledCatWorkspace(b)
	asNobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	call := func() {
		cmd := exec.Command(bin, "-C", ws, "call", "cat", benchPayload, "--approve", "allow")
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "BASIS_CONFIG_DIR=" + cfg}
		cmd.SysProcAttr = asNobody
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != benchPayload {
			b.Fatalf("basis call as uid %d: %q, %v\n%s", nobody, out, err, stderr.String())
		}
	}
	cat := func() {
		cmd := exec.Command("/bin/cat")
		cmd.SysProcAttr = asNobody
		cmd.Stdin = strings.NewReader(benchPayload)
		out, err := cmd.Output()
		if err != nil || string(out) != benchPayload {
			b.Fatalf("/bin/cat as uid %d: %q, %v", nobody, out, err)
		}
	}
	probes := filepath.Join(home, ".cache", "basis", "probe")
	call() // the first call probes, and remembers
	if entries, err := os.ReadDir(probes); err != nil || len(entries) != 1 {
		b.Fatalf("the first call remembered no probe in %s: %v %v", probes, entries, err)
	}
	var remembered, probing, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		call()
		t1 := time.Now()
		b.StopTimer()
		if err := os.RemoveAll(probes); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t2 := time.Now()
		call()
		t3 := time.Now()
		cat()
		remembered = append(remembered, t1.Sub(t0))
		probing = append(probing, t3.Sub(t2))
		direct = append(direct, time.Since(t3))
	}
	mr, mp, md := median(remembered), median(probing), median(direct)
	b.ReportMetric(float64(mr.Microseconds()), "basis-µs/op")
	b.ReportMetric(float64(mp.Microseconds()), "probing-µs/op")
	b.ReportMetric(float64(md.Microseconds()), "direct-µs/op")
	b.ReportMetric(float64(mr)/float64(md), "ratio")
	b.ReportMetric(float64(mp)/float64(md), "probing-ratio")
	b.ReportMetric(float64(mr)/float64(mp), "over-probing")
}

// copyExecutable copies the program at from to to, mode 0755.
func copyExecutable(tb testing.TB, from, to string) {
	tb.Helper()
	src, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		tb.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		tb.Fatal(err)
	}
}
