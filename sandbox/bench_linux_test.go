//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
)

// BenchmarkSandboxedCat runs /bin/cat with a small payload, plain and
// sandboxed, alternating in the same loop so both see the same machine;
// it reports the ratio of their medians (the target is ≤ 1.15; a mean
// would let one slow rmdir decide it), and each one's median, lowest and
// highest time. In an empty workspace the sandbox has nothing to keep
// read-only; in a repository it holds .git, .basis and .mcp.json in a
// mount namespace of the call's own, after searching the tree for nested
// repositories; "confined-floor" is the floor under both, a start from a
// thread confined once with nothing around it. Run as root, "unprivileged" runs "empty" again in a copy
// of this binary as uid 65534, where the sandbox re-executes the binary
// to make its namespaces, and reports that run's figures;
// "unprivileged-helper" the same with the sandbox helper beside the
// binary, which the sandbox then starts instead of re-executing the binary;
// "unprivileged-floor" runs "namespaces" there, the floor under it: no
// sandbox, only os/exec cloning /bin/cat into new user, PID and network
// namespaces, which every Go program pays (os/exec forks without vfork
// for a user namespace, copying the parent's page tables).
func BenchmarkSandboxedCat(b *testing.B) {
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	b.Run("empty", func(b *testing.B) { benchmarkCat(b, b.TempDir()) })
	b.Run("repository", func(b *testing.B) {
		ws := b.TempDir()
		for _, dir := range []string{".git/objects", ".git/refs", ".basis", "cmd/tool", "internal/a", "internal/b", "docs"} {
			if err := os.MkdirAll(filepath.Join(ws, dir), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		for _, f := range []string{".git/config", ".basis/tools.json", ".mcp.json", "go.mod", "cmd/tool/main.go"} {
			if err := os.WriteFile(filepath.Join(ws, f), []byte("{}"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		benchmarkCat(b, ws)
	})
	b.Run("confined-floor", benchmarkKeptThread)
	b.Run("namespaces", benchmarkNamespaces)
	b.Run("unprivileged", func(b *testing.B) { benchmarkUnprivileged(b, "empty", false) })
	b.Run("unprivileged-helper", func(b *testing.B) { benchmarkUnprivileged(b, "empty", true) })
	b.Run("unprivileged-floor", func(b *testing.B) { benchmarkUnprivileged(b, "namespaces", false) })
}

func benchmarkCat(b *testing.B, workspace string) {
	// A workspace's directories usually changed long ago, and the search
	// for what to protect remembers their listings only then; this one was
	// made a moment ago, so the clock the search reads is moved on (see
	// SettleEveryChangeTime).
	b.Cleanup(sandbox.SettleEveryChangeTime())
	sb, err := sandbox.New(sandbox.Policy{}, workspace)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkAlternated(b, "sandboxed", sb.Prepare)
}

// benchmarkKeptThread alternates a plain run of /bin/cat with one started
// from a thread confined once, as a kept thread is (see
// sandbox.KeptThread): the floor under "empty" as root, where each
// sandboxed start hands the start to such a thread, and the kernel holds
// the program to its Landlock domain and socket filter.
func benchmarkKeptThread(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("programs start from a kept thread of this process as root only")
	}
	start, end, err := sandbox.KeptThread(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(end)
	benchmarkAlternated(b, "confined", func(cmd *exec.Cmd) (func() error, func(), error) {
		return func() error { return start(cmd) }, func() {}, nil
	})
}

// benchmarkNamespaces alternates a plain run of /bin/cat with one that
// os/exec clones into new user, PID and network namespaces, and nothing
// else: as the sandbox's clone of its trampoline, with no IDs mapped (a
// process that is not dumpable, as basis and this test binary are, may
// not map its child's).
func benchmarkNamespaces(b *testing.B) {
	benchmarkAlternated(b, "namespaces", func(cmd *exec.Cmd) (func() error, func(), error) {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
			Pdeathsig:  syscall.SIGKILL,
		}
		return cmd.Start, func() {}, nil
	})
}

// benchmarkAlternated runs /bin/cat plainly and as prepare starts it,
// alternated, and reports both runs' medians, lowest and highest times
// (the second's under name) and the ratio of the medians.
func benchmarkAlternated(b *testing.B, name string, prepare func(*exec.Cmd) (func() error, func(), error)) {
	payload := []byte(strings.Repeat(`{"path": "a"}`, 64))
	run := func(prepared bool) time.Duration {
		cmd := exec.Command("/bin/cat")
		cmd.Env = []string{}
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		began := time.Now()
		start, release := cmd.Start, func() {}
		if prepared {
			var err error
			if start, release, err = prepare(cmd); err != nil {
				b.Fatal(err)
			}
		}
		if err := start(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		release()
		d := time.Since(began)
		if !bytes.Equal(out.Bytes(), payload) {
			b.Fatal("cat did not echo its input")
		}
		return d
	}
	var plain, prepared []time.Duration
	for b.Loop() {
		plain = append(plain, run(false))
		prepared = append(prepared, run(true))
	}
	p, c := spread(plain), spread(prepared)
	b.ReportMetric(p[1], "plain-µs")
	b.ReportMetric(p[0], "plain-min-µs")
	b.ReportMetric(p[2], "plain-max-µs")
	b.ReportMetric(c[1], name+"-µs")
	b.ReportMetric(c[0], name+"-min-µs")
	b.ReportMetric(c[2], name+"-max-µs")
	b.ReportMetric(c[1]/p[1], "ratio")
}

// spread returns the lowest, median and highest of ds, in microseconds.
func spread(ds []time.Duration) [3]float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	µs := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return [3]float64{µs(s[0]), µs(s[len(s)/2]), µs(s[len(s)-1])}
}

// benchmarkUnprivileged runs BenchmarkSandboxedCat's sub-benchmark sub
// in a copy of this test binary as uid 65534 (as TestUnprivileged does),
// withHelper the sandbox helper built beside it, and reports the figures
// it printed.
func benchmarkUnprivileged(b *testing.B, sub string, withHelper bool) {
	if os.Geteuid() != 0 {
		b.Skip("already unprivileged: see empty")
	}
	if os.Getenv(helperEnv) != "" {
		b.Skip("this is the unprivileged run")
	}
	dir, err := os.MkdirTemp("", "sandbox-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	data, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		b.Fatal(err)
	}
	if withHelper {
		buildHelper(b, dir)
	}
	for b.Loop() {
		cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^BenchmarkSandboxedCat$/^"+sub+"$", "-test.benchtime", "1s", "-test.count", "1")
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin", helperEnv + "=" + helper}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("the unprivileged run failed: %v\n%s", err, out)
		}
		line := regexp.MustCompile(`(?m)^BenchmarkSandboxedCat/` + sub + `\S*\s+\d+\s+\S+ ns/op(.*)$`).FindSubmatch(out)
		if line == nil {
			b.Fatalf("the unprivileged run printed no figures:\n%s", out)
		}
		f := strings.Fields(string(line[1]))
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				b.Fatalf("the unprivileged run printed %q", line[1])
			}
			b.ReportMetric(v, f[i+1])
		}
	}
}
