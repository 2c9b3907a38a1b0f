//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// helperEnv names a prebuilt sbhelper, for the unprivileged re-run of
// these tests (TestUnprivileged).
const helperEnv = "SANDBOX_TEST_HELPER"

// helper is the path of the sbhelper program, built once in TestMain.
var helper string

func TestMain(m *testing.M) {
	sandbox.Main() // the test binary is the trampoline, as a host's would be
	// As basis does (cmd/basis/dumpable_linux.go): what this process
	// starts is not dumpable until it executes, which decides what it
	// may do with its own namespaces.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_SET_DUMPABLE:", err)
		os.Exit(2)
	}
	if mode := os.Getenv(hostEnv); mode != "" {
		os.Exit(host(mode)) // a stand-in for basis, which a test kills
	}
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	helper = filepath.Join(dir, "sbhelper")
	if prebuilt := os.Getenv(helperEnv); prebuilt != "" {
		helper = prebuilt // an unprivileged re-run, which cannot build
	} else {
		build := exec.Command("go", "build", "-o", helper, "./testdata/sbhelper")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building sbhelper:", err)
			os.Exit(2)
		}
	}
	// Every sandboxed run makes its workspace a cache under the user cache
	// directory: the tests' go to a directory of their own (after the
	// build above, which uses the real one).
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	chmodWritable(dir) // Go makes its module cache read-only
	os.RemoveAll(dir)
	os.Exit(code)
}

// chmodWritable makes everything below dir writable by its owner, so it
// can be removed.
func chmodWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
}

// requireSandbox skips when this machine cannot confine a program; the
// fail-closed tests cover that case on purpose.
func requireSandbox(t *testing.T) {
	t.Helper()
	if err := sandbox.Check(sandbox.Policy{}); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
}

// result is what one sandboxed helper run reported.
type result struct {
	ok     bool
	output string
}

// runHelper runs sbhelper args under sb in dir and returns its report.
// It also returns the per-call temporary directory's release function
// already called, as subprocess would.
func runHelper(t *testing.T, sb *sandbox.Sandbox, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(helper, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=/usr/bin:/bin"}
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start, release, err := sb.Prepare(cmd)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	defer release()
	if err := start(); err != nil {
		t.Fatalf("starting the helper: %v", err)
	}
	err = cmd.Wait()
	out := buf.String()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running the helper: %v", err)
	}
	if exit != nil && exit.ExitCode() != 1 {
		t.Fatalf("helper exited %d (not its own failure): %s", exit.ExitCode(), out)
	}
	t.Logf("sbhelper %s: %s", strings.Join(args, " "), out)
	return result{ok: err == nil, output: strings.TrimSpace(out)}
}

func newSandbox(t *testing.T, p sandbox.Policy, workspace string) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(p, workspace)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return sb
}

// permissionDenied reports whether the helper's output is the error a
// program sees when Landlock refuses a write.
func permissionDenied(output string) bool {
	return strings.Contains(output, syscall.EACCES.Error())
}

func TestWrites(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	outside := t.TempDir() // under /tmp, but not the per-call temp dir
	sub := filepath.Join(workspace, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(workspace, "escape")); err != nil {
		t.Fatal(err)
	}
	home := os.Getenv("HOME")
	if home == "" {
		t.Skip("no $HOME")
	}
	homeFile := filepath.Join(home, fmt.Sprintf("basis-sandbox-test-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(homeFile) })
	extra := t.TempDir()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cacheFile := filepath.Join(cache, fmt.Sprintf("basis-sandbox-test-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(cacheFile) })

	tests := []struct {
		name   string
		policy sandbox.Policy
		dir    string
		path   string
		ok     bool
	}{
		{"workspace file", sandbox.Policy{}, workspace, filepath.Join(workspace, "out.txt"), true},
		{"subdirectory cwd", sandbox.Policy{}, sub, filepath.Join(sub, "out.txt"), true},
		{"user cache dir", sandbox.Policy{}, workspace, cacheFile, false},
		{"user cache dir, named by the operator", sandbox.Policy{Write: []string{cache}}, workspace, cacheFile, true},
		{"extra write path", sandbox.Policy{Write: []string{extra}}, workspace, filepath.Join(extra, "out.txt"), true},
		{"home", sandbox.Policy{}, workspace, homeFile, false},
		{"tmp outside the per-call dir", sandbox.Policy{}, workspace, filepath.Join(outside, "out.txt"), false},
		{"symlink out of the workspace", sandbox.Policy{}, workspace, filepath.Join(workspace, "escape", "out.txt"), false},
		// A cwd inside the workspace is the workspace: a link there is
		// not granted as a root of its own, whatever it leads to.
		{"cwd a link in the workspace pointing out", sandbox.Policy{}, filepath.Join(workspace, "escape"), filepath.Join(outside, "via-cwd.txt"), false},
		{"etc", sandbox.Policy{}, workspace, "/etc/basis-sandbox-test", false},
		{"read-only: workspace", sandbox.Policy{Mode: sandbox.ReadOnly}, workspace, filepath.Join(workspace, "ro.txt"), false},
		{"read-only: extra path ignored", sandbox.Policy{Mode: sandbox.ReadOnly, Write: []string{extra}}, workspace, filepath.Join(extra, "ro.txt"), false},
		{"off: anywhere", sandbox.Policy{Mode: sandbox.Off}, workspace, filepath.Join(outside, "off.txt"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, newSandbox(t, tt.policy, workspace), tt.dir, "write", tt.path)
			if got.ok != tt.ok {
				t.Fatalf("write %s: ok = %v (%s), want %v", tt.path, got.ok, got.output, tt.ok)
			}
			_, statErr := os.Stat(tt.path)
			if tt.ok != (statErr == nil) {
				t.Fatalf("after the run, the file exists = %v, want %v", statErr == nil, tt.ok)
			}
			if !tt.ok && !permissionDenied(got.output) {
				t.Fatalf("the refused write reported %q, want a permission error the program sees", got.output)
			}
		})
	}
}

func TestNetwork(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	workspace := t.TempDir()
	addr := ln.Addr().String()
	tests := []struct {
		name    string
		network bool
		ok      bool
	}{
		{"without network, the host's loopback listener is unreachable", false, false},
		{"with network, it is reachable", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, newSandbox(t, sandbox.Policy{Network: tt.network}, workspace), workspace, "connect", addr)
			if got.ok != tt.ok {
				t.Fatalf("connect: ok = %v (%s), want %v", got.ok, got.output, tt.ok)
			}
		})
	}
}

// Where namespaces are not available, Landlock's TCP rules cut the
// network; the simulated kernel here only hides the namespace, the
// Landlock rules are real.
func TestNetworkCutByLandlockWithoutNamespaces(t *testing.T) {
	requireSandbox(t)
	sb := newSandbox(t, sandbox.Policy{}, t.TempDir())
	restore := sandbox.SimulateKernel(7, false, "")
	defer restore()
	if got := sb.Describe("").NetworkCut; got != sandbox.CutLandlockTCP {
		t.Fatalf("NetworkCut = %q, want %q", got, sandbox.CutLandlockTCP)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := runHelper(t, sb, "", "connect", ln.Addr().String())
	if got.ok || !permissionDenied(got.output) {
		t.Fatalf("connect under Landlock TCP rules: ok = %v (%s), want a permission error", got.ok, got.output)
	}
}

// A root program in the sandbox must not be able to walk back into the
// host's network namespace.
func TestCannotEnterTheHostNetworkNamespace(t *testing.T) {
	requireSandbox(t)
	sb := newSandbox(t, sandbox.Policy{}, t.TempDir())
	if sb.Describe("").NetworkCut != sandbox.CutNamespace {
		t.Skip("no network namespaces here")
	}
	got := runHelper(t, sb, "", "setns", fmt.Sprintf("/proc/%d/ns/net", os.Getpid()))
	if got.ok {
		t.Fatal("a sandboxed program entered basis's network namespace")
	}
}

// Root keeps its powers over files but loses those that reach past the
// sandbox: CAP_SYS_ADMIN (setns, mounts), CAP_NET_ADMIN, CAP_SYS_PTRACE.
// An unprivileged program holds none (its CAP_NET_ADMIN for loopback is
// gone before it runs).
func TestDangerousCapabilitiesAreDropped(t *testing.T) {
	requireSandbox(t)
	got := runHelper(t, newSandbox(t, sandbox.Policy{}, t.TempDir()), "", "caps")
	if !got.ok {
		t.Fatalf("caps: %s", got.output)
	}
	for _, line := range strings.Split(got.output, "\n") {
		name, hex, _ := strings.Cut(line, " ")
		if name == "CapBnd:" && os.Geteuid() != 0 {
			// An unprivileged program has no capabilities and, with
			// no_new_privs, cannot gain any by exec: the bounding set of
			// its user namespace does not matter.
			continue
		}
		var set uint64
		if _, err := fmt.Sscanf(hex, "%x", &set); err != nil {
			t.Fatalf("cannot read %q: %v", line, err)
		}
		for _, c := range []struct {
			bit  uint
			name string
		}{{21, "CAP_SYS_ADMIN"}, {12, "CAP_NET_ADMIN"}, {19, "CAP_SYS_PTRACE"}, {16, "CAP_SYS_MODULE"}} {
			if set&(1<<c.bit) != 0 {
				t.Errorf("%s still holds %s", name, c.name)
			}
		}
	}
}

// The trampoline (a re-execution of this binary through Main) is how an
// unprivileged process gets its namespace; run as root, the simulated
// kernel below sends root through it too.
func TestTrampoline(t *testing.T) {
	requireSandbox(t)
	defer sandbox.SimulateKernel(7, true, "")()
	workspace, outside := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	probe := exec.Command(helper)
	_, release, err := sb.Prepare(probe)
	if err != nil {
		t.Fatal(err)
	}
	release()
	want := wantTrampoline()
	if probe.Path != want || probe.Args[0] != "basis-sandbox" || probe.Args[2] != helper {
		t.Fatalf("Prepare did not rewrite the command into the trampoline %s: %q %q", want, probe.Path, probe.Args)
	}
	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"write inside", []string{"write", filepath.Join(workspace, "t.txt")}, true},
		{"write outside", []string{"write", filepath.Join(outside, "t.txt")}, false},
		{"grandchild writes outside", []string{"child", "write", filepath.Join(outside, "g.txt")}, false},
		{"connect to the host's loopback", []string{"connect", ln.Addr().String()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, sb, workspace, tt.args...)
			if got.ok != tt.ok {
				t.Fatalf("ok = %v (%s), want %v", got.ok, got.output, tt.ok)
			}
		})
	}
	got := runHelper(t, sb, workspace, "caps")
	if !strings.Contains(got.output, "CapAmb: 0000000000000000") {
		t.Fatalf("the trampoline left ambient capabilities: %s", got.output)
	}
}

func TestGrandchildInheritsTheRestrictions(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	outside := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"grandchild writes in the workspace", []string{"child", "write", filepath.Join(workspace, "g.txt")}, true},
		{"grandchild writes outside", []string{"child", "write", filepath.Join(outside, "g.txt")}, false},
		{"great-grandchild writes outside", []string{"child", "child", "write", filepath.Join(outside, "gg.txt")}, false},
		{"grandchild connects", []string{"child", "connect", ln.Addr().String()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, sb, workspace, tt.args...)
			if got.ok != tt.ok {
				t.Fatalf("ok = %v (%s), want %v", got.ok, got.output, tt.ok)
			}
		})
	}
}

// Each call gets a TMPDIR of its own, writable even in read-only mode,
// and what it wrote there is gone once release returns: the directory is
// removed, or, where the call's thread is kept for the next call of its
// kind (see TestKeptDirectoryIsEmptiedAndClosedBetweenCalls), emptied and
// closed to others. Which of the two happens depends on how many threads
// earlier calls keep, so the test accepts either.
func TestPerCallTempDirIsPrivateAndRemoved(t *testing.T) {
	requireSandbox(t)
	sb := newSandbox(t, sandbox.Policy{Mode: sandbox.ReadOnly}, t.TempDir())
	for range 3 {
		cmd := exec.Command(helper, "tmpdir")
		cmd.Env = []string{"TMPDIR=/tmp"}
		var buf strings.Builder
		cmd.Stdout = &buf
		start, release, err := sb.Prepare(cmd)
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		if err = start(); err == nil {
			err = cmd.Wait()
		}
		out := buf.String()
		if err != nil {
			t.Fatalf("the helper could not write in its TMPDIR, even in read-only mode: %v: %s", err, out)
		}
		dir := strings.TrimSpace(out)
		if dir == "/tmp" {
			t.Fatal("the program's TMPDIR was the one it was given, not its own")
		}
		if _, err := os.Stat(filepath.Join(dir, "scratch")); err != nil {
			t.Fatalf("the file written in TMPDIR is not there before release: %v", err)
		}
		release()
		info, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed
		}
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 0 || info.Mode().Perm() != 0o700 {
			t.Fatalf("the per-call temp dir %s is still there after release, not emptied and closed: mode %v, %d entries (%v)", dir, info.Mode().Perm(), len(entries), err)
		}
	}
}

func TestFailsClosed(t *testing.T) {
	const noLandlock = "this kernel has no Landlock"
	tests := []struct {
		name    string
		abi     int
		netns   bool
		network bool
		want    error
	}{
		{"no Landlock", 0, true, false, sandbox.ErrUnavailable},
		{"no Landlock, network allowed", 0, true, true, sandbox.ErrUnavailable},
		{"old Landlock and no namespaces: the network cannot be cut", 3, false, false, sandbox.ErrUnavailable},
		{"old Landlock and no namespaces, network allowed", 3, false, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restore := sandbox.SimulateKernel(tt.abi, tt.netns, noLandlock)
			defer restore()
			sb := newSandbox(t, sandbox.Policy{Network: tt.network}, t.TempDir())
			cmd := exec.Command("/bin/true")
			_, release, err := sb.Prepare(cmd)
			if release != nil {
				release()
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Prepare error = %v, want %v", err, tt.want)
			}
			if !errors.Is(sandbox.Check(sb.Policy()), tt.want) {
				t.Fatalf("Check disagrees with Prepare")
			}
			if err == nil {
				return
			}
			if cmd.Path != "/bin/true" || len(cmd.Args) != 1 {
				t.Fatalf("a refused Prepare changed the command: %q %q", cmd.Path, cmd.Args)
			}
			msg := err.Error()
			for _, part := range []string{"sandbox unavailable", `"mode": "off"`, sandbox.ConfigFile} {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not contain %q", msg, part)
				}
			}
			if tt.abi == 0 && !strings.Contains(msg, noLandlock) {
				t.Errorf("message %q does not say why", msg)
			}
		})
	}
	t.Run("off runs without Landlock", func(t *testing.T) {
		restore := sandbox.SimulateKernel(0, false, noLandlock)
		defer restore()
		sb := newSandbox(t, sandbox.Policy{Mode: sandbox.Off}, t.TempDir())
		cmd := exec.Command("/bin/true")
		_, release, err := sb.Prepare(cmd)
		if err != nil {
			t.Fatalf("Prepare with the sandbox off: %v", err)
		}
		release()
		if cmd.Path != "/bin/true" {
			t.Fatalf("off changed the command to %q", cmd.Path)
		}
	})
	t.Run("a binary without Main", func(t *testing.T) {
		defer sandbox.SimulateKernel(7, true, "")() // a namespace that needs the trampoline
		restore := sandbox.SimulateMissingMain()
		defer restore()
		_, release, err := newSandbox(t, sandbox.Policy{}, t.TempDir()).Prepare(exec.Command("/bin/true"))
		if release != nil {
			release()
		}
		if !errors.Is(err, sandbox.ErrNoTrampoline) && !errors.Is(err, sandbox.ErrUnavailable) {
			t.Fatalf("Prepare error = %v, want ErrNoTrampoline", err)
		}
	})
}

func TestDescribe(t *testing.T) {
	workspace := t.TempDir()
	extra := t.TempDir()
	repo := t.TempDir()
	writeFiles(t, repo, repoFiles)
	writeFiles(t, extra, map[string]string{"tool/.git/config": "", "deep/a/b/c/d/.git/config": ""})
	cache := newSandbox(t, sandbox.Policy{}, workspace).CacheDir()
	repoCache := newSandbox(t, sandbox.Policy{}, repo).CacheDir()
	restore := sandbox.SimulateKernel(7, true, "")
	defer restore()
	tests := []struct {
		name      string
		policy    sandbox.Policy
		workspace string
		dir       string
		want      sandbox.Description
	}{
		{"default", sandbox.Policy{}, workspace, "", sandbox.Description{
			Mode: sandbox.WorkspaceWrite, Network: "none", NetworkCut: sandbox.CutNamespace,
			Write: sorted(sandbox.TempDirPlaceholder, workspace, cache),
		}},
		{"cwd inside the root: the root", sandbox.Policy{}, workspace, "sub", sandbox.Description{
			Mode: sandbox.WorkspaceWrite, Network: "none", NetworkCut: sandbox.CutNamespace,
			Write: sorted(sandbox.TempDirPlaceholder, workspace, cache),
		}},
		{"cwd outside the root, extra path, network", sandbox.Policy{Network: true, Write: []string{extra}}, workspace, extra, sandbox.Description{
			Mode: sandbox.WorkspaceWrite, Network: "allowed",
			Write: sorted(sandbox.TempDirPlaceholder, workspace, cache, extra),
			// .git is looked for three levels down, no deeper.
			Protected: []string{filepath.Join(extra, "tool/.git")},
		}},
		{"what is protected", sandbox.Policy{Protect: []string{".envrc", filepath.Join(repo, "src.txt"), "/etc/passwd"}}, repo, "", sandbox.Description{
			Mode: sandbox.WorkspaceWrite, Network: "none", NetworkCut: sandbox.CutNamespace,
			Write: sorted(sandbox.TempDirPlaceholder, repo, repoCache),
			// /etc/passwd is outside every writable directory: Landlock
			// keeps it read-only already.
			Protected: sorted(in(repo, ".basis", ".envrc", ".git", ".githooks", ".mcp.json", "a/b/.git", "src.txt", "sub/.git")...),
		}},
		{"read-only", sandbox.Policy{Mode: sandbox.ReadOnly, Write: []string{extra}}, repo, "", sandbox.Description{
			Mode: sandbox.ReadOnly, Network: "none", NetworkCut: sandbox.CutNamespace,
			Write: []string{sandbox.TempDirPlaceholder},
		}},
		{"off", sandbox.Policy{Mode: sandbox.Off}, repo, "", sandbox.Description{
			Mode: sandbox.Off, Network: "allowed", Write: []string{"/"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newSandbox(t, tt.policy, tt.workspace).Describe(tt.dir)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
		})
	}
}

// in joins each name to dir.
func in(dir string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

func sorted(paths ...string) []string {
	out := append([]string(nil), paths...)
	for i := range out {
		if r, err := filepath.EvalSymlinks(out[i]); err == nil {
			out[i] = r
		}
	}
	slices.Sort(out)
	return out
}

// A call's TMPDIR is on a tmpfs where /dev/shm is one this user may
// write, 0700, and out of reach of every other call: a program that knows
// another call's directory can neither read nor write a file in it (its
// names can be listed, as everything's can). Run as root (which keeps
// CAP_DAC_OVERRIDE) and as uid 65534.
func TestPerCallTempDirsAreApart(t *testing.T) {
	requireSandbox(t)
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC || unix.Access("/dev/shm", unix.W_OK) != nil {
		t.Skip("no writable tmpfs at /dev/shm here")
	}
	for _, p := range []sandbox.Policy{{}, {LimitReads: true}} {
		ws := t.TempDir()
		sb := newSandbox(t, p, ws)
		first := exec.Command(helper, "tmpdir")
		var buf strings.Builder
		first.Stdout = &buf
		start, release, err := sb.Prepare(first)
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		if err = start(); err == nil {
			err = first.Wait()
		}
		if err != nil {
			t.Fatalf("the first call failed: %v", err)
		}
		dir := strings.TrimSpace(buf.String())
		if filepath.Dir(dir) != "/dev/shm" {
			t.Errorf("TMPDIR is %s, want a directory in /dev/shm", dir)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("TMPDIR %s: %v, want mode 0700", dir, fi.Mode())
		}
		scratch := filepath.Join(dir, "scratch")
		tests := []struct {
			name string
			args []string
		}{
			{"read its file", []string{"read", scratch}},
			{"write in it", []string{"write", filepath.Join(dir, "planted")}},
			{"overwrite its file", []string{"write", scratch}},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("limitreads=%v/%s", p.LimitReads, tt.name), func(t *testing.T) {
				got := runHelper(t, sb, ws, tt.args...)
				if got.ok {
					t.Fatalf("a second call could %s in the first call's TMPDIR: %s", tt.name, got.output)
				}
			})
		}
		release()
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the per-call temp dir %s is still there after release (stat: %v)", dir, err)
		}
	}
}

// Run as root, these tests also run unprivileged (uid 65534), where the
// network namespace needs a user namespace: the test binary and the helper
// are copied where that user can run them, with a home directory it owns
// (so that a refused write there is the sandbox's doing, not the file
// mode's).
func TestUnprivileged(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged")
	}
	if os.Getenv(helperEnv) != "" {
		t.Skip("this is the unprivileged run")
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "sandbox-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	bin, help := copyTestBinaries(t, dir)
	tests := unprivilegedTests
	if _, err := exec.LookPath("git"); err == nil {
		tests = append(tests, "TestGitConfigFsmonitor") // it skips without git, which this run refuses
	}
	run := func(what string, env ...string) {
		t.Helper()
		cmd := exec.Command(bin, "-test.v", "-test.count=1", "-test.run", "^("+strings.Join(tests, "|")+")$")
		cmd.Dir = dir
		cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/bin:/bin", helperEnv + "=" + help}, env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the unprivileged run %s failed: %v\n%s", what, err, out)
		}
		t.Logf("the unprivileged run %s:\n%s", what, out)
		if strings.Contains(string(out), "--- SKIP") {
			t.Fatalf("the unprivileged run %s skipped what it was meant to prove:\n%s", what, out)
		}
		for _, name := range tests {
			if !strings.Contains(string(out), "--- PASS: "+name+" ") {
				t.Errorf("the unprivileged run %s did not pass %s:\n%s", what, name, out)
			}
		}
	}
	run("re-executing itself")
	// Again with the sandbox helper beside the binary, where `make
	// install` puts it beside basis: every test passes the same through
	// it, and TestTrampoline sees it started.
	run("through the helper", trampolineEnv+"="+buildHelper(t, dir))
}

// buildHelper builds the sandbox helper into dir, static as make build
// builds it, and returns its path.
func buildHelper(tb testing.TB, dir string) string {
	tb.Helper()
	installed := filepath.Join(dir, sandbox.HelperName)
	build := exec.Command("go", "build", "-o", installed, "./cmd/basis-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building the helper: %v\n%s", err, out)
	}
	return installed
}

// HelperStatus says what confines this process's programs: as root, no
// helper is needed; unprivileged, the helper beside the binary when one
// is there (TestUnprivileged's second run), else why not.
func TestHelperStatus(t *testing.T) {
	requireSandbox(t)
	path, err := sandbox.HelperStatus()
	switch installed := os.Getenv(trampolineEnv); {
	case os.Geteuid() == 0:
		if path != "" || err != nil {
			t.Errorf("as root: HelperStatus = %q, %v; want none needed", path, err)
		}
	case installed != "":
		if path != installed || err != nil {
			t.Errorf("with a helper beside the binary: HelperStatus = %q, %v; want %s", path, err, installed)
		}
	default:
		if path != "" || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("with no helper beside the binary: HelperStatus = %q, %v; want it missing", path, err)
		}
	}
}

// trampolineEnv names, in an unprivileged run, the helper the trampoline
// is expected to be started from; unset, the running binary.
const trampolineEnv = "SANDBOX_TEST_TRAMPOLINE"

// wantTrampoline is the path Prepare should start a trampoline from.
func wantTrampoline() string {
	if installed := os.Getenv(trampolineEnv); installed != "" {
		return installed
	}
	return "/proc/self/exe"
}

// unprivilegedTests are the tests TestUnprivileged runs again as uid
// 65534.
var unprivilegedTests = []string{
	"TestWrites", "TestNetwork", "TestNetworkCutByLandlockWithoutNamespaces",
	"TestDangerousCapabilitiesAreDropped", "TestGrandchildInheritsTheRestrictions",
	"TestPerCallTempDirIsPrivateAndRemoved", "TestPerCallTempDirsAreApart", "TestTrampoline", "TestPrepareCommand", "TestProtectedPaths",
	"TestProtectedMountsDoNotLeak", "TestProtectedSymlinkRefused", "TestCache", "TestUnixSockets",
	"TestUDPCutWithoutNamespaces", "TestOtherProcesses",
	"TestNetworkNamespaceForEveryUser", "TestTerminalIoctlsAreDenied",
	"TestNoDescendantSurvives", "TestReleaseEndsTheProgram", "TestBasisDeathEndsTheProgram",
	"TestParentDeathSignal", "TestReadOnlyTool", "TestReadOnlyModeAloneReadsHome",
	"TestWarmHoldsTheReadRules", "TestGitConfigRemembered", "TestProbeThread",
	"TestRememberedProbe", "TestProbeUsernsRemembersOnlyASuccess", "TestExitNotConfinedForgetsTheProbe",
	"TestRememberedProbeGivesTheSameSupport", "TestHelperStatus",
}

// PrepareCommand confines a command that something else starts with
// cmd.Start, with or without the network.
func TestPrepareCommand(t *testing.T) {
	requireSandbox(t)
	workspace, outside := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tests := []struct {
		name    string
		network bool
		args    []string
		ok      bool
	}{
		{"write inside", false, []string{"write", filepath.Join(workspace, "p.txt")}, true},
		{"write outside", false, []string{"write", filepath.Join(outside, "p.txt")}, false},
		{"write outside with the network", true, []string{"write", filepath.Join(outside, "p.txt")}, false},
		{"connect without the network", false, []string{"connect", ln.Addr().String()}, false},
		{"connect with the network", true, []string{"connect", ln.Addr().String()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(helper, tt.args...)
			cmd.Dir = workspace
			release, err := newSandbox(t, sandbox.Policy{Network: tt.network}, workspace).PrepareCommand(cmd)
			if err != nil {
				t.Fatalf("PrepareCommand: %v", err)
			}
			defer release()
			if cmd.Path != wantTrampoline() {
				t.Fatalf("PrepareCommand did not rewrite the command into %s: %q", wantTrampoline(), cmd.Path)
			}
			out, err := cmd.CombinedOutput()
			if (err == nil) != tt.ok {
				t.Fatalf("ok = %v (%s), want %v", err == nil, out, tt.ok)
			}
		})
	}
}

// copyTestBinaries copies this test binary and the helper program into
// dir, readable and executable by every user, for a run as another user
// (the originals sit in directories only root may enter).
func copyTestBinaries(t *testing.T, dir string) (bin, help string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "sandbox.test")
	help = filepath.Join(dir, "sbhelper")
	for src, dst := range map[string]string{self: bin, helper: help} {
		data, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(dst, data, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return bin, help
}
