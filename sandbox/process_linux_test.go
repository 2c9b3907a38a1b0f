//go:build linux

package sandbox_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// markerEnv marks, in their environment, the processes one test starts,
// so that the test can find every one of them that is left.
const markerEnv = "SANDBOX_TEST_MARKER"

// hostEnv makes the test binary a stand-in for basis (see host): its
// value says how the host starts its program.
const hostEnv = "SANDBOX_TEST_HOST"

// how a test starts a sandboxed program.
const (
	viaPrepare = "prepare"         // Prepare, as subprocess does
	viaCommand = "prepare-command" // PrepareCommand then cmd.Start, as the MCP SDK does
)

// newMarker returns a fresh marker and removes, when the test ends, every
// process still carrying it, so a failing test leaves nothing behind.
func newMarker(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	marker := hex.EncodeToString(b)
	t.Cleanup(func() { killMarked(marker) })
	return marker
}

// marked lists the processes whose environment carries marker (those
// this process may inspect: all as root, its own user's otherwise).
func marked(marker string) []int {
	want := []byte(markerEnv + "=" + marker)
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func killMarked(marker string) {
	for _, pid := range marked(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// waitUnmarked polls until no process carries marker, for at most a
// generous bound (the kernel's kill of a namespace is asynchronous to
// the death of the process that started it).
func waitUnmarked(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := marked(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v survived", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startConfined confines cmd with sb the way how says and starts it.
func startConfined(t *testing.T, sb *sandbox.Sandbox, how string, cmd *exec.Cmd) (release func()) {
	t.Helper()
	var start func() error
	var err error
	switch how {
	case viaPrepare:
		start, release, err = sb.Prepare(cmd)
	case viaCommand:
		release, err = sb.PrepareCommand(cmd)
		start = cmd.Start
	default:
		t.Fatalf("unknown way %q", how)
	}
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	if err := start(); err != nil {
		release()
		t.Fatalf("starting: %v", err)
	}
	return release
}

func helperEnvWith(extra ...string) []string {
	return append([]string{"HOME=" + os.Getenv("HOME"), "PATH=/usr/bin:/bin"}, extra...)
}

// Every process a sandboxed program leaves behind dies with it, however it
// left its process group. With the sandbox off (the control) the survivor
// is there to see, so the test can tell.
func TestNoDescendantSurvives(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	type run struct {
		name   string
		policy sandbox.Policy
		how    string
	}
	runs := []run{
		{"off (control)", sandbox.Policy{Mode: sandbox.Off}, viaPrepare},
		{"sandboxed", sandbox.Policy{}, viaPrepare},
		{"sandboxed with the network", sandbox.Policy{Network: true}, viaPrepare},
		{"PrepareCommand with the network", sandbox.Policy{Network: true}, viaCommand},
		{"PrepareCommand", sandbox.Policy{}, viaCommand},
	}
	for _, escape := range []string{"setsid", "setpgid", "daemon"} {
		for _, r := range runs {
			t.Run(escape+"/"+r.name, func(t *testing.T) {
				marker := newMarker(t)
				cmd := exec.Command(helper, "escape", escape)
				cmd.Dir = workspace
				cmd.Env = helperEnvWith(markerEnv + "=" + marker)
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				release := startConfined(t, newSandbox(t, r.policy, workspace), r.how, cmd)
				err := cmd.Wait()
				release()
				if err != nil || out.String() != "up\n" {
					t.Fatalf("the helper failed: %v: %s", err, out.String())
				}
				left := marked(marker)
				if r.policy.Mode == sandbox.Off {
					if len(left) == 0 {
						t.Fatal("control: no survivor found without the sandbox, so the test cannot see one")
					}
					return
				}
				if len(left) != 0 {
					t.Fatalf("processes %v outlived the sandboxed program", left)
				}
			})
		}
	}
}

// The program and what it started stay while the call runs — the thread
// that started it ending must not kill it — and release ends them.
func TestReleaseEndsTheProgram(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	for _, how := range []string{viaPrepare, viaCommand} {
		t.Run(how, func(t *testing.T) {
			marker := newMarker(t)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command(helper, "escape", "setsid", "stay")
			cmd.Dir = workspace
			cmd.Env = helperEnvWith(markerEnv + "=" + marker)
			cmd.Stdout, cmd.Stderr = w, w
			release := startConfined(t, newSandbox(t, sandbox.Policy{}, workspace), how, cmd)
			w.Close()
			line, err := bufio.NewReader(r).ReadString('\n')
			if line != "up\n" {
				release()
				t.Fatalf("the helper did not start its survivor: %q %v", line, err)
			}
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo != 0 {
				release()
				t.Fatalf("the program ended before release (waitid: %v, %+v)", err, info)
			}
			if got := len(marked(marker)); got != 2 {
				t.Errorf("%d marked processes before release, want the program and its survivor", got)
			}
			release()
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err = <-waited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the program still runs after release")
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("after release: %v, want the program killed", err)
			}
			if left := marked(marker); len(left) != 0 {
				t.Fatalf("processes %v outlived release", left)
			}
		})
	}
}

// The program gets SIGKILL when the thread that started it ends, also
// through the trampoline (which must execute it from the thread the
// signal was set on).
func TestParentDeathSignal(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	for _, how := range []string{viaPrepare, viaCommand} {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, network %v", how, network), func(t *testing.T) {
				for range 5 { // which thread runs the trampoline's main varies
					cmd := exec.Command(helper, "pdeathsig")
					cmd.Dir = workspace
					cmd.Env = helperEnvWith()
					var out strings.Builder
					cmd.Stdout, cmd.Stderr = &out, &out
					release := startConfined(t, newSandbox(t, sandbox.Policy{Network: network}, workspace), how, cmd)
					err := cmd.Wait()
					release()
					if got, want := strings.TrimSpace(out.String()), strconv.Itoa(int(syscall.SIGKILL)); err != nil || got != want {
						t.Fatalf("parent-death signal %q (%v), want %s", got, err, want)
					}
				}
			})
		}
	}
}

// host is what the test binary does as a stand-in for basis: it starts
// sbhelper (escape setsid stay) as mode says, relays its output, and
// waits to be killed.
func host(mode string) int {
	policy, how := sandbox.Policy{}, mode
	switch mode {
	case hostOnce:
		return hostRunOnce()
	case "off":
		policy, how = sandbox.Policy{Mode: sandbox.Off}, viaPrepare
	case viaCommand:
		policy.Network = true // as an MCP server
	}
	dir, _ := os.Getwd()
	sb, err := sandbox.New(policy, dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd := exec.Command(os.Getenv(helperEnv), "escape", "setsid", "stay")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var start func() error
	switch how {
	case viaPrepare:
		start, _, err = sb.Prepare(cmd)
	case viaCommand:
		_, err = sb.PrepareCommand(cmd)
		start = cmd.Start
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err == nil {
		err = start()
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	for {
		unix.Pause() // until killed; release is never called
	}
}

// hostOnce makes the host run /bin/true confined once, start to release,
// and exit 0.
const hostOnce = "once"

func hostRunOnce() int {
	dir, _ := os.Getwd()
	sb, err := sandbox.New(sandbox.Policy{}, dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd := exec.Command("/bin/true")
	start, release, err := sb.Prepare(cmd)
	if err == nil {
		defer release()
		if err = start(); err == nil {
			err = cmd.Wait()
		}
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// startHost starts the test binary as a host (see host) that starts its
// program as mode says, with its per-call directories in tmp, and returns
// it once the program is up; the test kills it at the latest when it
// ends.
func startHost(t *testing.T, marker, mode, tmp string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := exec.Command(self)
	h.Dir = t.TempDir()
	h.Env = helperEnvWith(markerEnv+"="+marker, hostEnv+"="+mode, helperEnv+"="+helper, "TMPDIR="+tmp)
	stdout, err := h.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.Stderr = os.Stderr
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Process.Kill(); h.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "up\n" {
		t.Fatalf("the host did not start its program: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout) // the program's survivor may hold it
	return h
}

// When basis dies, even by SIGKILL, what it started dies too: the
// parent-death signal kills the first process of the PID namespace, and
// the kernel the rest.
func TestBasisDeathEndsTheProgram(t *testing.T) {
	requireSandbox(t)
	for _, mode := range []string{"off", viaPrepare, viaCommand} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			// TMPDIR: the killed host's call directory is left in the test's own.
			h := startHost(t, marker, mode, t.TempDir())
			// The host itself is not dumpable: only root sees it.
			if got := len(slices.DeleteFunc(marked(marker), func(pid int) bool { return pid == h.Process.Pid })); got != 2 {
				t.Errorf("%d marked processes besides the host, want its program and the survivor", got)
			}
			if err := h.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = h.Wait()
			if mode == "off" {
				if len(marked(marker)) == 0 {
					t.Fatal("control: without the sandbox nothing survived the host, so the test cannot see a survivor")
				}
				return
			}
			waitUnmarked(t, marker)
		})
	}
}

// openPty opens a pseudo-terminal pair as an operator's terminal would be:
// the master stays with the test, the slave is what programs are given.
func openPty(t *testing.T) (slave *os.File, path string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	path = fmt.Sprintf("/dev/pts/%d", n)
	slave, err = os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return slave, path
}

// A sandboxed program cannot type into a terminal (TIOCSTI) nor use any
// other terminal ioctl, even on its own controlling terminal, whether it
// opens it as /dev/tty or by the pty's path; nor can it write to the
// pty, or even open it for reading. The control, without the sandbox, shows each attempt works.
func TestTerminalIoctlsAreDenied(t *testing.T) {
	requireSandbox(t)
	slave, pty := openPty(t)
	workspace := t.TempDir()
	legacy, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	// Without CAP_SYS_ADMIN, TIOCSTI on one's own terminal needs the
	// legacy setting (Linux 6.2+).
	tiocstiWorks := os.Geteuid() == 0 || strings.TrimSpace(string(legacy)) != "0"
	type attempt struct {
		args []string
		ok   bool // without the sandbox
	}
	attempts := []attempt{
		{[]string{"ioctl", "/dev/tty", "tcgets"}, true},
		{[]string{"ioctl", "/dev/tty", "tiocsti"}, tiocstiWorks},
		{[]string{"ioctl", pty, "tcgets"}, true},
		{[]string{"ioctl", pty, "tiocsti"}, tiocstiWorks},
		{[]string{"write", pty}, true},
		// Reading the operator's terminal would take what is typed there.
		{[]string{"open", pty}, true},
	}
	runs := []struct {
		name   string
		policy sandbox.Policy
		how    string
	}{
		{"off (control)", sandbox.Policy{Mode: sandbox.Off}, viaPrepare},
		{"sandboxed", sandbox.Policy{}, viaPrepare},
		{"sandboxed with the network", sandbox.Policy{Network: true}, viaPrepare},
		{"PrepareCommand", sandbox.Policy{Network: true}, viaCommand},
	}
	for _, r := range runs {
		for _, a := range attempts {
			t.Run(r.name+"/"+strings.Join(a.args, " "), func(t *testing.T) {
				cmd := exec.Command(helper, a.args...)
				cmd.Dir = workspace
				cmd.Env = helperEnvWith()
				// The pty is the program's controlling terminal, as if
				// its host had not given it a session of its own.
				cmd.Stdin = slave
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				release := startConfined(t, newSandbox(t, r.policy, workspace), r.how, cmd)
				err := cmd.Wait()
				release()
				got := strings.TrimSpace(out.String())
				want := a.ok && r.policy.Mode == sandbox.Off
				if (err == nil) != want {
					t.Fatalf("ok = %v (%s), want %v", err == nil, got, want)
				}
				if r.policy.Mode != sandbox.Off && !permissionDenied(got) {
					t.Fatalf("the refusal said %q, want the sandbox's permission error", got)
				}
			})
		}
	}
}

// Every user, root or not, gets a network namespace of the program's own
// when the network is cut — also when this process is not dumpable, as
// basis is not (TestMain makes the test binary so): the program cannot
// reach the host's loopback by TCP or UDP, its own loopback works, and it
// runs as the user who started it.
func TestNetworkNamespaceForEveryUser(t *testing.T) {
	requireSandbox(t)
	if dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || dumpable != 0 {
		t.Fatalf("the test process is dumpable (%d, %v); basis is not", dumpable, err)
	}
	workspace := t.TempDir()
	sb := newSandbox(t, sandbox.Policy{}, workspace)
	if got := sb.Describe("").NetworkCut; got != sandbox.CutNamespace {
		t.Fatalf("network_cut = %q for uid %d, want %q", got, os.Getuid(), sandbox.CutNamespace)
	}
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udp.WriteTo(buf[:n], from)
		}
	}()
	tests := []struct {
		name    string
		network bool
		args    []string
		ok      bool
	}{
		{"TCP to the host's loopback", false, []string{"connect", tcp.Addr().String()}, false},
		{"UDP to the host's loopback", false, []string{"udpecho", udp.LocalAddr().String()}, false},
		{"its own loopback", false, []string{"loopback"}, true},
		{"with the network, UDP to the host's loopback (control)", true, []string{"udpecho", udp.LocalAddr().String()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runHelper(t, newSandbox(t, sandbox.Policy{Network: tt.network}, workspace), workspace, tt.args...)
			if got.ok != tt.ok {
				t.Fatalf("ok = %v (%s), want %v", got.ok, got.output, tt.ok)
			}
		})
	}
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("identity, network %v", network), func(t *testing.T) {
			got := runHelper(t, newSandbox(t, sandbox.Policy{Network: network}, workspace), workspace, "ids")
			uid, gid := os.Getuid(), os.Getgid()
			want := fmt.Sprintf("uid %d gid %d uid_map %d %d", uid, gid, uid, uid)
			if diff := cmp.Diff(want, got.output); diff != "" {
				t.Fatalf("inside the sandbox (-want +got):\n%s", diff)
			}
		})
	}
}

// A thread the sandbox ends (one it confined for a call, or a probe's) has
// no child process: Linux sends a child's parent-death signal when the
// thread that cloned it ends, and os/exec clones from whatever thread a
// goroutine runs on, so ending a thread on which another goroutine once
// started a program with Pdeathsig (as subprocess and the MCP transport
// start theirs) would kill that program. Each round starts a bystander
// and, right after, from the same goroutine, a throwaway thread, which Go
// tends to run on the thread that has just cloned the bystander.
func TestEndedThreadsHaveNoChildren(t *testing.T) {
	var bystanders []*exec.Cmd
	defer func() {
		for _, c := range bystanders {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range 20 {
		bystander := exec.Command("/bin/cat")
		bystander.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdin, err := bystander.StdinPipe() // cat waits on it until the test ends
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		if err := bystander.Start(); err != nil {
			t.Fatal(err)
		}
		bystanders = append(bystanders, bystander)
		ended := make(chan int, 1)
		sandbox.GoOnChildlessThread(func() { ended <- unix.Gettid() })
		tid := <-ended
		if tid == os.Getpid() {
			t.Fatal("the main thread was given out (Go parks it for good, confined, instead of ending it)")
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d did not end", tid)
			}
		}
	}
	for i, c := range bystanders {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, c.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo != 0 {
			t.Fatalf("bystander %d of %d has ended (waitid: %v)", i+1, len(bystanders), err)
		}
	}
}

// The main thread is never the one confined for a call: Go cannot end it,
// so it would stay confined for the process's life, in the call's mount
// namespace — which /proc/self, the main thread's view, would then show
// the whole process.
func TestTheMainThreadIsNeverConfined(t *testing.T) {
	for range 300 {
		ended := make(chan int, 1)
		sandbox.GoOnChildlessThread(func() { ended <- unix.Gettid() })
		if <-ended == os.Getpid() {
			t.Fatal("the main thread was given out")
		}
	}
}

// A command whose SysProcAttr is replaced after Prepare would start
// without the PID namespace and the parent-death signal: start refuses
// it, and the program does not run.
func TestReplacedSysProcAttrIsRefused(t *testing.T) {
	requireSandbox(t)
	workspace := t.TempDir()
	marker := filepath.Join(workspace, "ran")
	cmd := exec.Command(helper, "write", marker)
	start, release, err := newSandbox(t, sandbox.Policy{}, workspace).Prepare(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := start(); err == nil || !strings.Contains(err.Error(), "SysProcAttr") {
		cmd.Wait()
		t.Fatalf("start = %v, want a refusal naming SysProcAttr", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran")
	}
}
