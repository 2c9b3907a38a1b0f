//go:build linux

package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"golang.org/x/sys/unix"
)

// serveUnix accepts and closes connections on a Unix stream socket at
// path until the test ends.
func serveUnix(t *testing.T, network, path string) {
	t.Helper()
	if network == "unixgram" {
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return
	}
	ln, err := net.Listen(network, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// A program without the network cannot reach a Unix socket outside its
// sandbox — a filesystem one (docker.sock, the session bus, ssh-agent) or
// an abstract one — nor make an io_uring, nor slip a socket past the
// filter through another architecture's system calls. With the network it
// can (the control that the listeners work).
func TestUnixSockets(t *testing.T) {
	requireSandbox(t)
	workspace, outside := t.TempDir(), t.TempDir()
	stream := filepath.Join(outside, "agent.sock")
	gram := filepath.Join(outside, "log.sock")
	abstract := fmt.Sprintf("basis-sandbox-test-%d", os.Getpid())
	serveUnix(t, "unix", stream)
	serveUnix(t, "unixgram", gram)
	serveUnix(t, "unix", "@"+abstract)
	const denied = "permission denied"
	tests := []struct {
		name string
		args []string
		want []string // what a program without the network may see
	}{
		{"connect to a filesystem socket", []string{"unix", stream}, []string{denied}},
		{"a grandchild connects to it", []string{"child", "unix", stream}, []string{denied}},
		{"send a datagram from a socketpair", []string{"unixgram", gram}, []string{denied}},
		// Landlock's abstract-socket scope refused this before the filter
		// (EPERM); the filter refuses the socket itself.
		{"connect to an abstract socket", []string{"abstract", abstract}, []string{denied, "operation not permitted"}},
		// Stricter than needed: a Unix socket in the per-call TMPDIR.
		{"listen in TMPDIR", []string{"listen", "own.sock"}, []string{denied}},
		{"set up an io_uring", []string{"iouring"}, []string{"operation not permitted"}},
	}
	for _, tt := range tests {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, network %v", tt.name, network), func(t *testing.T) {
				got := runHelper(t, newSandbox(t, sandbox.Policy{Network: network}, workspace), workspace, tt.args...)
				if network != got.ok {
					t.Fatalf("ok = %v (%s), want %v", got.ok, got.output, network)
				}
				if !network && !containsAny(got.output, tt.want) {
					t.Fatalf("the refusal said %q, want one of %q", got.output, tt.want)
				}
			})
		}
	}
	t.Run("i386 system call entry", func(t *testing.T) {
		// Not skipped but passed where there is nothing to prove, so that
		// the unprivileged re-run, which refuses skips, runs everywhere.
		if runtime.GOARCH != "amd64" {
			t.Log("amd64 only")
			return
		}
		control := run(t, newSandbox(t, sandbox.Policy{Network: true}, workspace), workspace, helper, "int80")
		if control.code != 0 {
			t.Logf("this kernel has no i386 system call entry (%s): nothing to prove", control.output)
			return
		}
		got := run(t, newSandbox(t, sandbox.Policy{}, workspace), workspace, helper, "int80")
		if got.signal != syscall.SIGSYS {
			t.Fatalf("exit %d, signal %v (%s): want the process killed by SIGSYS", got.code, got.signal, got.output)
		}
	})
}

// Where only Landlock's TCP rules cut the network (no namespace), the
// filter refuses every socket, so UDP is cut too.
func TestUDPCutWithoutNamespaces(t *testing.T) {
	requireSandbox(t)
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sb := newSandbox(t, sandbox.Policy{}, t.TempDir())
	defer sandbox.SimulateKernel(7, false, "")()
	got := runHelper(t, sb, "", "udp", conn.LocalAddr().String())
	if got.ok || !permissionDenied(got.output) {
		t.Fatalf("udp under Landlock's TCP rules: ok = %v (%s), want a permission error", got.ok, got.output)
	}
}

// target is a process outside every sandbox, with a secret in its
// environment, waiting until the test ends.
func target(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(helper, "wait")
	cmd.Env = []string{"SECRET_CANARY=hunter2"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the target said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stdout)
	return cmd.Process.Pid
}

// A sandboxed program cannot signal, trace, or read the memory or
// environment of a process outside its sandbox — basis's own included.
// With the sandbox off it can (the control).
func TestOtherProcesses(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	self := strconv.Itoa(os.Getpid())
	tests := []struct {
		name string
		args func(pid string) []string
		want []string // errors a sandboxed program may see
	}{
		// EPERM from Landlock's signal scope; ESRCH where the program's
		// PID namespace does not even see the process.
		{"kill", func(pid string) []string { return []string{"kill", pid} }, []string{"operation not permitted", "no such process"}},
		{"ptrace attach", func(pid string) []string { return []string{"ptrace", pid} }, []string{"operation not permitted", "no such process"}},
		{"read its environment", func(pid string) []string { return []string{"read", "/proc/" + pid + "/environ"} }, []string{"permission denied"}},
		{"read its memory", func(pid string) []string { return []string{"read", "/proc/" + pid + "/mem"} }, []string{"permission denied"}},
		{"read basis's environment", func(string) []string { return []string{"read", "/proc/" + self + "/environ"} }, []string{"permission denied"}},
		{"read basis's memory", func(string) []string { return []string{"read", "/proc/" + self + "/mem"} }, []string{"permission denied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "basis's") {
				// TestMain makes this process non-dumpable, as basis is,
				// and that alone keeps an unprivileged program out: for
				// the control to show what the sandbox adds, it is
				// dumpable while this test runs.
				if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
					t.Fatal(err)
				}
				defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
			}
			pid := target(t)
			args := tt.args(strconv.Itoa(pid))
			got := runHelper(t, newSandbox(t, sandbox.Policy{}, workspace), workspace, args...)
			if got.ok || !containsAny(got.output, tt.want) {
				t.Fatalf("ok = %v (%s), want a failure with one of %q", got.ok, got.output, tt.want)
			}
			off := runHelper(t, newSandbox(t, sandbox.Policy{Mode: sandbox.Off}, workspace), workspace, args...)
			// Reading /proc/PID/mem from offset 0 fails even unsandboxed
			// (nothing is mapped there), but past the open: with EIO.
			if containsAny(off.output, tt.want) {
				t.Fatalf("with the sandbox off it failed the same way (%s): the test proves nothing", off.output)
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
