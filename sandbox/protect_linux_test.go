//go:build linux

package sandbox_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

// outcome is how a program run under a sandbox ended.
type outcome struct {
	code   int            // exit code; -1 when killed
	signal syscall.Signal // the signal that killed it, if one did
	output string
}

// run runs argv under sb in dir, as subprocess would, and returns how it
// ended whatever it was.
func run(t *testing.T, sb *sandbox.Sandbox, dir string, argv ...string) outcome {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
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
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", argv[0], err)
	}
	o := outcome{code: cmd.ProcessState.ExitCode(), output: strings.TrimSpace(buf.String())}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		o.signal = ws.Signal()
	}
	t.Logf("%s: exit %d %v: %s", strings.Join(argv, " "), o.code, o.signal, o.output)
	return o
}

// writeFiles creates each path (relative to root) with its content; a
// name ending in / is a directory.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repoFiles is a workspace as an attacker finds it: a repository whose
// config names a hook directory, a checked-out submodule (its .git a file
// pointing into the parent's .git/modules), a nested repository, basis's
// and MCP's config, and an .envrc the operator protects.
var repoFiles = map[string]string{
	".git/HEAD":               "ref: refs/heads/main\n",
	".git/config":             "[core]\n\thooksPath = .githooks\n",
	".git/hooks/":             "",
	".git/modules/sub/config": "[core]\n\tbare = false\n",
	".githooks/pre-commit":    "#!/bin/sh\n",
	".gitmodules":             "[submodule \"sub\"]\n\tpath = sub\n\turl = ../sub\n",
	"sub/.git":                "gitdir: ../.git/modules/sub\n",
	"sub/code.go":             "package sub\n",
	"a/b/.git/config":         "[core]\n",
	".basis/tools.json":       `{"tools": []}`,
	".mcp.json":               `{"mcpServers": {}}`,
	".envrc":                  "export A=1\n",
	"src.txt":                 "source\n",
}

// snapshot reads every file below root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			out[rel] = "symlink"
		case fi.IsDir():
			out[rel+"/"] = ""
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mountTable is the host's mount table, as this goroutine's thread sees
// it. Not /proc/self's: that is the main thread's, and the main thread
// may be one that started a confined program (a locked goroutine can run
// on it; the Go runtime then parks it for good), in the program's mount
// namespace.
func mountTable(t *testing.T) string {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	data, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const (
	readOnlyFS = "read-only file system"
	busy       = "device or resource busy"
)

// What programs outside the sandbox execute stays read-only inside the
// workspace: writes fail with EROFS, and renaming or removing it to make
// a new one fails too (EBUSY: a mount point).
func TestProtectedPaths(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	writeFiles(t, workspace, repoFiles)
	before := snapshot(t, workspace)
	mounts := mountTable(t)
	sb := newSandbox(t, sandbox.Policy{Protect: []string{".envrc"}}, workspace)
	w := func(rel string) string { return filepath.Join(workspace, rel) }
	tests := []struct {
		name string
		args []string
		want string // the error the program sees
	}{
		{"write .git/config", []string{"write", w(".git/config")}, readOnlyFS},
		{"add a hook", []string{"write", w(".git/hooks/pre-commit")}, readOnlyFS},
		{"move .git away", []string{"rename", w(".git"), w("x")}, busy},
		{"remove .git", []string{"remove", w(".git")}, readOnlyFS},
		{"write .basis/tools.json", []string{"write", w(".basis/tools.json")}, readOnlyFS},
		{"replace .basis/tools.json by rename", []string{"rename", w("src.txt"), w(".basis/tools.json")}, "invalid cross-device link"},
		{"remove .basis", []string{"remove", w(".basis")}, readOnlyFS},
		{"move .basis away", []string{"rename", w(".basis"), w("y")}, busy},
		{"write .mcp.json", []string{"write", w(".mcp.json")}, readOnlyFS},
		{"move .mcp.json away", []string{"rename", w(".mcp.json"), w("y")}, busy},
		{"replace .mcp.json by rename", []string{"rename", w("src.txt"), w(".mcp.json")}, busy},
		{"write the submodule's .git file", []string{"write", w("sub/.git")}, readOnlyFS},
		{"move the submodule's .git away", []string{"rename", w("sub/.git"), w("sub/x")}, busy},
		{"write the submodule's config", []string{"write", w(".git/modules/sub/config")}, readOnlyFS},
		{"write a nested repository's config", []string{"write", w("a/b/.git/config")}, readOnlyFS},
		{"move a nested repository's .git away", []string{"rename", w("a/b/.git"), w("a/b/x")}, busy},
		{"write the hooksPath directory", []string{"write", w(".githooks/pre-commit")}, readOnlyFS},
		{"write what the operator protects", []string{"write", w(".envrc")}, readOnlyFS},
		// A writable name for the same file would bypass the mount.
		{"hard-link .git/config out", []string{"link", w(".git/config"), w("config")}, "invalid cross-device link"},
		// With every capability in a user namespace of its own, the mount
		// stays: Landlock forbids mount and umount, and the kernel locks
		// the read-only flag of a mount that comes from a more privileged
		// namespace.
		{"undo the mount from a new user namespace", []string{"undo", w(".git")}, "is still read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, sb, workspace, tt.args...)
			if got.ok || !strings.Contains(got.output, tt.want) {
				t.Fatalf("ok = %v (%s), want a failure with %q", got.ok, got.output, tt.want)
			}
		})
	}
	t.Run("mv .git x; mkdir .git", func(t *testing.T) {
		got := run(t, sb, workspace, "/bin/sh", "-c", `mv .git x; mkdir .git; printf '[core]\n\tfsmonitor = touch pwned\n' > .git/config; mv .mcp.json y; rm -rf .basis; mkdir -p .basis && echo '{}' > .basis/tools.json`)
		if got.code == 0 {
			t.Fatalf("the shell reported success: %s", got.output)
		}
	})
	t.Run("through PrepareCommand (always the trampoline)", func(t *testing.T) {
		cmd := exec.Command(helper, "write", w(".git/config"))
		release, err := sb.PrepareCommand(cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), readOnlyFS) {
			t.Fatalf("err = %v (%s), want a failure with %q", err, out, readOnlyFS)
		}
	})
	if diff := cmp.Diff(before, snapshot(t, workspace)); diff != "" {
		t.Fatalf("a protected path changed (-before +after):\n%s", diff)
	}
	if after := mountTable(t); after != mounts {
		t.Fatalf("the host's mount table changed:\nbefore:\n%s\nafter:\n%s", mounts, after)
	}
	t.Run("ordinary files stay writable", func(t *testing.T) {
		for _, args := range [][]string{
			{"write", w("src.txt")},
			{"write", w("sub/code.go")},
			{"mkdir", w("newdir")},
			{"write", w("a/b/new.txt")},
			{"rename", w("src.txt"), w("renamed.txt")},
		} {
			if got := runHelper(t, sb, workspace, args...); !got.ok {
				t.Fatalf("%q: %s", args, got.output)
			}
		}
	})
}

// While a sandboxed program runs, its read-only mounts are its own: the
// host's mount table does not show them, then or after.
func TestProtectedMountsDoNotLeak(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	writeFiles(t, workspace, repoFiles)
	mounts := mountTable(t)
	cmd := exec.Command(helper, "wait")
	cmd.Dir = workspace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start, release, err := newSandbox(t, sandbox.Policy{}, workspace).Prepare(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	during := mountTable(t)
	inside, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "mountinfo"))
	stdin.Close()
	if werr := cmd.Wait(); werr != nil {
		t.Fatal(werr)
	}
	if during != mounts {
		t.Fatalf("while the program ran, the host's mount table changed:\nbefore:\n%s\nduring:\n%s", mounts, during)
	}
	if after := mountTable(t); after != mounts {
		t.Fatalf("after the program ran, the host's mount table changed:\nbefore:\n%s\nafter:\n%s", mounts, after)
	}
	if err == nil && !strings.Contains(string(inside), filepath.Join(workspace, ".git")) {
		t.Fatalf("the program's mount table has no mount on .git:\n%s", inside)
	}
}

// git itself, asked by a sandboxed program to set the command that the
// operator's next `git status` runs, fails.
func TestGitConfigFsmonitor(t *testing.T) {
	requireSandbox(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	workspace := t.TempDir()
	initRepo := exec.Command(git, "init", "-q", workspace)
	if out, err := initRepo.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	got := run(t, sb, workspace, git, "config", "core.fsmonitor", "touch pwned")
	if got.code == 0 {
		t.Fatalf("git config succeeded in the sandbox: %s", got.output)
	}
	check := exec.Command(git, "config", "--get", "core.fsmonitor")
	check.Dir = workspace
	if out, _ := check.Output(); len(out) > 0 {
		t.Fatalf("core.fsmonitor is set to %q", out)
	}
	// The sandboxed program can still use git for what it is for.
	if got := run(t, sb, workspace, git, "status", "--porcelain"); got.code != 0 {
		t.Fatalf("git status in the sandbox failed: %s", got.output)
	}
}

// A protected path that is a symbolic link cannot be held by a mount (a
// program could replace the link): the run is refused, not run with it
// writable.
func TestProtectedSymlinkRefused(t *testing.T) {
	requireSandbox(t)
	workspace, elsewhere := t.TempDir(), t.TempDir()
	writeFiles(t, elsewhere, map[string]string{"mcp.json": "{}"})
	if err := os.Symlink(filepath.Join(elsewhere, "mcp.json"), filepath.Join(workspace, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper, "write", filepath.Join(workspace, "x"))
	_, release, err := newSandbox(t, sandbox.Policy{}, workspace).Prepare(cmd)
	if release != nil {
		release()
	}
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), ".mcp.json is a symbolic link") {
		t.Fatalf("Prepare error = %v, want ErrUnavailable naming the link", err)
	}
}

// Where no mount namespace can be made, a workspace with something to
// protect fails closed; one with nothing to protect still runs.
func TestProtectFailsClosedWithoutMountNamespaces(t *testing.T) {
	requireSandbox(t)
	defer sandbox.SimulateNoMountNamespaces()()
	protected, plain := t.TempDir(), t.TempDir()
	writeFiles(t, protected, map[string]string{".git/config": ""})
	tests := []struct {
		name      string
		workspace string
		want      error
	}{
		{"with a .git", protected, sandbox.ErrUnavailable},
		{"nothing to protect", plain, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, release, err := newSandbox(t, sandbox.Policy{}, tt.workspace).Prepare(exec.Command(helper, "caps"))
			if release != nil {
				release()
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Prepare error = %v, want %v", err, tt.want)
			}
		})
	}
}

// aliasEnv runs TestProtectedAlias's inner half, in a mount namespace of
// its own where it may bind-mount without touching the host's.
const aliasEnv = "SANDBOX_TEST_ALIAS"

// Landlock grants writes by the directories a path crosses, so a second
// mount showing the workspace (a bind mount of it elsewhere) would reach
// .git by another path: that path is held read-only too.
func TestProtectedAlias(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount")
	}
	if os.Getenv(aliasEnv) == "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run", "^TestProtectedAlias$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), aliasEnv+"=1", helperEnv+"="+helper)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS} // Go makes / private in it
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestProtectedAlias") {
			t.Fatalf("the inner run failed: %v\n%s", err, out)
		}
		return
	}
	workspace, alias := t.TempDir(), t.TempDir()
	writeFiles(t, workspace, repoFiles)
	if err := syscall.Mount(workspace, alias, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(alias, syscall.MNT_DETACH) })
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	got := runHelper(t, sb, workspace, "write", filepath.Join(alias, ".git", "config"))
	if got.ok || !strings.Contains(got.output, readOnlyFS) {
		t.Fatalf("write through the alias: ok = %v (%s), want %q", got.ok, got.output, readOnlyFS)
	}
	if got := runHelper(t, sb, workspace, "write", filepath.Join(alias, "src.txt")); !got.ok {
		t.Fatalf("an ordinary file through the alias: %s", got.output)
	}
}
