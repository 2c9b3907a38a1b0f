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
// namespaces are made by a trampoline: the sandbox helper installed
// beside basis, as make install does. It alternates four runs: a `basis
// call` as a user's second and later calls make it, the probe of the
// namespaces remembered from an earlier process; the same call with that
// record removed first, as every call probed before ("probing"); the
// same call of a basis with no helper beside it, which re-executes itself
// ("self"); and /bin/cat directly. It reports each median, basis over
// /bin/cat ("ratio", "probing-ratio", "self-ratio"), the remembered call
// over the probing one ("over-probing") and over the call without the
// helper ("over-self").
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
	bin, self := filepath.Join(dir, "helped", "basis"), filepath.Join(dir, "alone", "basis")
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(self)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	copyExecutable(b, basisBinary, bin)
	copyExecutable(b, basisBinary, self)
	// Static, as make build builds it.
	if err := goBuildEnv([]string{"CGO_ENABLED=0"}, filepath.Join(repoDir(), "sandbox"), filepath.Join(filepath.Dir(bin), "basis-sandbox"), "./cmd/basis-sandbox"); err != nil {
		b.Fatal(err)
	}
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
	call := func(bin string) {
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
	call(bin) // the first call probes, and remembers
	record, err := os.ReadDir(probes)
	if err != nil || len(record) != 1 {
		b.Fatalf("the first call remembered no probe in %s: %v %v", probes, record, err)
	}
	// Both binaries are one build: the helper's record names the
	// helper, the other's does not (another key: the helper is in it).
	if data, err := os.ReadFile(filepath.Join(probes, record[0].Name())); err != nil || !strings.HasSuffix(string(data), " helper") {
		b.Fatalf("the first call did not use the helper: its probe record says %q, %v", data, err)
	}
	var remembered, probing, alone, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		call(bin)
		t1 := time.Now()
		b.StopTimer()
		if err := os.RemoveAll(probes); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t2 := time.Now()
		call(bin)
		t3 := time.Now()
		call(self)
		t4 := time.Now()
		cat()
		remembered = append(remembered, t1.Sub(t0))
		probing = append(probing, t3.Sub(t2))
		alone = append(alone, t4.Sub(t3))
		direct = append(direct, time.Since(t4))
	}
	mr, mp, ms, md := median(remembered), median(probing), median(alone), median(direct)
	b.ReportMetric(float64(mr.Microseconds()), "basis-µs/op")
	b.ReportMetric(float64(mp.Microseconds()), "probing-µs/op")
	b.ReportMetric(float64(ms.Microseconds()), "self-µs/op")
	b.ReportMetric(float64(md.Microseconds()), "direct-µs/op")
	b.ReportMetric(float64(mr)/float64(md), "ratio")
	b.ReportMetric(float64(mp)/float64(md), "probing-ratio")
	b.ReportMetric(float64(ms)/float64(md), "self-ratio")
	b.ReportMetric(float64(mr)/float64(mp), "over-probing")
	b.ReportMetric(float64(mr)/float64(ms), "over-self")
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
