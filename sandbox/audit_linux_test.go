package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

// auditOn turns the kernel's audit on for the test and back to what it
// was after; it skips where this process may not (no CAP_AUDIT_CONTROL,
// or a kernel without audit).
func auditOn(t *testing.T, on bool) {
	t.Helper()
	if os.Getenv("BASIS_TEST_AUDIT") != "1" {
		// The audit switch is the whole machine's: turning it on (or off)
		// while other tests run would change what they see. make
		// test-audit runs these alone.
		t.Skip("sets the kernel's audit for the whole machine; run alone with BASIS_TEST_AUDIT=1 (make test-audit)")
	}
	restore, err := sandbox.SetAudit(on)
	if err != nil {
		t.Skipf("cannot set the kernel's audit (AUDIT_SET needs CAP_AUDIT_CONTROL and a kernel with audit): %v", err)
	}
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Errorf("restoring the kernel's audit state: %v", err)
		}
	})
}

// requireLandlockAudit skips on a kernel whose Landlock does not log
// (before ABI 7, Linux 6.15).
func requireLandlockAudit(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if sandbox.LandlockABI() < 7 {
		t.Skip("Landlock before ABI 7 does not report its denials to the audit")
	}
}

// watched runs sbhelper args under a Watch of sb, in dir, as subprocess
// would (Prepare, start, Wait, release), and returns what the Watch
// reports and whether the helper succeeded.
type watched struct {
	cmd     *exec.Cmd
	watch   *sandbox.Watch
	release func()
}

func startWatched(t *testing.T, sb *sandbox.Sandbox, dir string, args ...string) *watched {
	t.Helper()
	cmd := exec.Command(helper, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=/usr/bin:/bin"}
	w := sb.Watch()
	start, release, err := w.Prepare(cmd)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := start(); err != nil {
		release()
		t.Fatalf("starting the helper: %v", err)
	}
	return &watched{cmd: cmd, watch: w, release: release}
}

// finish waits for the helper, releases it and returns what the Watch
// says it was refused.
func (w *watched) finish(t *testing.T) (denials []string, ok bool) {
	t.Helper()
	err := w.cmd.Wait()
	w.release()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running the helper: %v", err)
	}
	ds, more := w.watch.Denials()
	for _, d := range ds {
		denials = append(denials, d.String())
	}
	if more > 0 {
		t.Logf("%d more denials", more)
	}
	return denials, err == nil
}

// outsideFile makes a file outside the workspace, under a directory the
// sandbox does not let programs write, and returns its path.
func outsideFile(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// With audit on, a Watch names what the kernel refused the program; with
// it off, it names nothing and the run is the same.
func TestWatchNamesTheRefusedPath(t *testing.T) {
	requireLandlockAudit(t)
	workspace := t.TempDir()
	target := outsideFile(t, "v0.6.0.lock")
	for _, tt := range []struct {
		name  string
		audit bool
		want  []string
	}{
		{"audit on", true, []string{"writing " + target}},
		{"audit off", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			auditOn(t, tt.audit)
			// Restricted in a thread of this process, as root's programs
			// are, and in the trampoline, as an unprivileged user's.
			for _, trampoline := range []bool{false, true} {
				if trampoline {
					restore := sandbox.SimulateKernel(sandbox.LandlockABI(), true, "")
					defer restore()
				}
				sb := newSandbox(t, sandbox.Policy{}, workspace)
				run := startWatched(t, sb, workspace, "write", target)
				if (run.cmd.Path == "/proc/self/exe") != trampoline {
					t.Fatalf("trampoline %v, but the command is %s", trampoline, run.cmd.Path)
				}
				got, ok := run.finish(t)
				if ok {
					t.Fatal("the helper wrote outside the workspace")
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("trampoline %v: denials (-want +got):\n%s", trampoline, diff)
				}
			}
		})
	}
}

// A program that succeeds reports nothing, and the Watch waits for
// nothing.
func TestWatchSuccessReportsNothing(t *testing.T) {
	requireLandlockAudit(t)
	auditOn(t, true)
	workspace := t.TempDir()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	got, ok := startWatched(t, sb, workspace, "write", filepath.Join(workspace, "in.txt")).finish(t)
	if !ok || len(got) > 0 {
		t.Fatalf("ok %v, denials %q; want ok and none", ok, got)
	}
}

// Calls that run at the same time, in the same process, each get their
// own denials only, and a program the process starts without a Watch is
// nobody's.
func TestWatchKeepsCallsApart(t *testing.T) {
	requireLandlockAudit(t)
	auditOn(t, true)
	workspace := t.TempDir()
	files := []string{outsideFile(t, "a"), outsideFile(t, "b"), outsideFile(t, "c")}
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	// Three programs wait for their stdin to close, so all run at once;
	// each then fails a write of its own.
	var runs []*watched
	var stdins []*os.File
	for _, f := range files[:2] {
		w := startChild(t, sb, workspace, &stdins, true, f)
		runs = append(runs, w)
	}
	unwatched := startChild(t, sb, workspace, &stdins, false, files[2])
	for _, in := range stdins {
		in.Close()
	}
	var wg sync.WaitGroup
	got := make([][]string, len(runs))
	for i, w := range runs {
		wg.Go(func() { got[i], _ = w.finish(t) })
	}
	wg.Go(func() { unwatched.cmd.Wait(); unwatched.release() })
	wg.Wait()
	for i, w := range runs {
		_ = w
		if diff := cmp.Diff([]string{"writing " + files[i]}, got[i]); diff != "" {
			t.Errorf("call %d: denials (-want +got):\n%s", i, diff)
		}
	}
}

// startChild starts sbhelper, which waits for its stdin to close and then
// writes path, under a Watch or under Prepare alone.
func startChild(t *testing.T, sb *sandbox.Sandbox, dir string, stdins *[]*os.File, watch bool, path string) *watched {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `read _; exec "$0" write "$1"`, helper, path)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	*stdins = append(*stdins, w)
	var start func() error
	var release func()
	wt := sb.Watch()
	if watch {
		start, release, err = wt.Prepare(cmd)
	} else {
		start, release, err = sb.Prepare(cmd)
	}
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := start(); err != nil {
		release()
		t.Fatalf("start: %v", err)
	}
	r.Close()
	return &watched{cmd: cmd, watch: wt, release: release}
}

// A program chooses the names it is refused: what a Watch reports is
// escaped for a terminal, never a raw escape sequence or line break.
func TestWatchEscapesHostilePaths(t *testing.T) {
	requireLandlockAudit(t)
	auditOn(t, true)
	workspace := t.TempDir()
	target := outsideFile(t, "x\x1b[2J\nbasis: approved \u202e")
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	got, _ := startWatched(t, sb, workspace, "write", target).finish(t)
	want := []string{"writing " + filepath.Dir(target) + `/x\u001b[2J\u000abasis: approved \u202e`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("denials (-want +got):\n%s", diff)
	}
}

// A process that may not read the audit (uid 65534: no CAP_AUDIT_READ)
// runs its programs as Prepare does, with nothing reported, while the
// audit is on.
func TestWatchUnprivileged(t *testing.T) {
	requireLandlockAudit(t)
	if os.Geteuid() != 0 {
		t.Skip("this test runs its unprivileged part itself")
	}
	auditOn(t, true)
	const nobody = 65534
	dir, err := os.MkdirTemp("", "sandbox-watch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, help := copyTestBinaries(t, dir)
	cmd := exec.Command(bin, "-test.v", "-test.count=1", "-test.run", "^TestWatchAsNobody$")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin", helperEnv + "=" + help, watchNobodyEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchAsNobody ") {
		t.Fatalf("the unprivileged run failed: %v\n%s", err, out)
	}
}

// watchNobodyEnv marks TestWatchUnprivileged's run of TestWatchAsNobody.
const watchNobodyEnv = "SANDBOX_TEST_WATCH_NOBODY"

func TestWatchAsNobody(t *testing.T) {
	if os.Getenv(watchNobodyEnv) == "" {
		t.Skip("run by TestWatchUnprivileged, as uid 65534")
	}
	workspace := t.TempDir()
	// /tmp lets everyone create files: Landlock refuses this one.
	target := filepath.Join("/tmp", fmt.Sprintf("sandbox-watch-nobody-%d", os.Getpid()))
	for i := range 2 { // the first call finds it may not read; the second does not try
		sb := newSandbox(t, sandbox.Policy{}, workspace)
		got, ok := startWatched(t, sb, workspace, "write", target).finish(t)
		if ok || len(got) > 0 {
			t.Fatalf("call %d: ok %v, denials %q; want a failure and no denials", i, ok, got)
		}
	}
}

// The kernel writes untrusted strings in hex when they hold anything but
// plain characters; addresses as host and port.
func TestParseAuditRecord(t *testing.T) {
	for _, tt := range []struct {
		text string
		want string
	}{
		{`audit(1796162894.075:206): domain=109f16f26 blockers=fs.make_reg path="/root" dev="vda" ino=1224`, "creating a file in /root"},
		{`audit(1.2:3): domain=1 blockers=fs.write_file,fs.truncate path=2F746D702F6120621B5B33316D0A63 dev="vda" ino=1`, `writing /tmp/a b\u001b[31m\u000ac`},
		{`audit(1.2:3): domain=1 blockers=net.connect_tcp daddr=10.0.0.1 dest=443`, "connecting to 10.0.0.1:443"},
		{`audit(1.2:3): domain=1 blockers=net.connect_tcp daddr=2001:db8::1 dest=80`, "connecting to [2001:db8::1]:80"},
		{`audit(1.2:3): domain=1 blockers=net.bind_tcp src=8080`, "listening on port 8080"},
		{`audit(1.2:3): domain=1 blockers=scope.signal opid=1 ocomm="init"`, "signalling a process outside the sandbox"},
		{`audit(1.2:3): domain=1 blockers=fs.new_thing path="/x"`, "fs.new_thing on /x"},
		{`audit(1.2:3): domain=1 blockers=fs.make_dir path="/x" name="y"`, "creating a directory in /x/y"},
	} {
		got := sandbox.DenialOf(sandbox.ParseAuditRecord(tt.text)).String()
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}
