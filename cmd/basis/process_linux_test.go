//go:build linux

package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests hold basis's own handling of the processes it starts to
// account (issue 19, items 1 and 2): the sandbox is off in them, so what
// they see owes nothing to it.

// procWorld is a workspace and an operator config directory that turns
// the sandbox off, every user may enter, and basis may run in as root or
// as nobody.
type procWorld struct {
	dir, ws, config string
	env             []string
	nobody          bool
}

const nobody = 65534

func newProcWorld(t *testing.T, asNobody bool) *procWorld {
	t.Helper()
	dir := sharedDir(t)
	w := &procWorld{dir: dir, ws: filepath.Join(dir, "ws"), config: filepath.Join(dir, "config"), nobody: asNobody}
	write(t, filepath.Join(w.ws, ".basis", "tools.json"), `{"schema": 1, "tools": {}}`)
	write(t, filepath.Join(w.config, "sandbox.json"), `{"schema": 1, "mode": "off"}`)
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.ws, "BASIS_CONFIG_DIR=" + w.config}
	if asNobody {
		chownTree(t, dir, nobody)
	}
	return w
}

func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// basis returns the basis command for args in the world, run as nobody
// when the world says so.
func (w *procWorld) basis(args ...string) *exec.Cmd {
	cmd := exec.Command(basisBinary, append([]string{"-C", w.ws}, args...)...)
	cmd.Env = w.env
	if w.nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	return cmd
}

// fifo makes a FIFO the world's user may open.
func (w *procWorld) fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(w.dir, fmt.Sprintf("fifo-%d", time.Now().UnixNano()))
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if w.nobody {
		if err := os.Chown(path, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// spawnInput is the JSON input of a spawn command.
func spawnInput(command string) string {
	raw, _ := json.Marshal(map[string]string{"input": "!" + command})
	return string(raw)
}

// newMarker returns an environment entry no other process carries.
func newMarker() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "PROCTEST_MARKER=" + hex.EncodeToString(b)
}

// escapeCommand is a spawn command that leaves `setsid sleep 300` behind,
// marked, and exits at once — once the sleeper is in its own session (it
// said so on the FIFO), so the group kill cannot be what ends it.
func escapeCommand(marker, fifo string) string {
	return fmt.Sprintf(`%s setsid sh -c 'echo > "$0"; exec sleep 300' %s & read x < %s`, marker, fifo, fifo)
}

// markedProcesses lists the live processes whose environment holds marker.
func markedProcesses(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, entry := range strings.Split(string(env), "\x00") {
			if entry == marker {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// requireNoneMarked fails unless no live process carries marker, waiting
// (boundedly) only for the kernel to finish ending what was killed.
func requireNoneMarked(t *testing.T, marker string) {
	t.Helper()
	var pids []int
	if waitUntil(5*time.Second, func() bool { pids = markedProcesses(t, marker); return len(pids) == 0 }) {
		return
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("processes a call started outlived it: %v", pids)
}

// A spawn command that leaves a process in a session of its own leaves
// nothing once `basis call` has returned, whoever runs basis.
func TestNothingACallStartsOutlivesIt(t *testing.T) {
	for _, asNobody := range []bool{false, true} {
		t.Run(fmt.Sprintf("as nobody: %t", asNobody), func(t *testing.T) {
			w := newProcWorld(t, asNobody)
			marker := newMarker()
			cmd := w.basis("call", "spawn", spawnInput(escapeCommand(marker, w.fifo(t))), "--approve", "allow")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("basis call: %v\n%s", err, out)
			}
			requireNoneMarked(t, marker)
		})
	}
}

// When basis dies mid-call, even by SIGKILL, the program it runs dies
// with it.
func TestProgramDiesWithBasis(t *testing.T) {
	w := newProcWorld(t, false)
	fifo := w.fifo(t)
	cmd := w.basis("call", "spawn", spawnInput(fmt.Sprintf(`echo $$ > %s; exec sleep 300`, fifo)), "--approve", "allow")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fifo) // until the program writes its pid
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	cmd.Process.Kill()
	cmd.Wait()
	pid, convErr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || convErr != nil {
		t.Fatalf("the program's pid: %q (%v, %v)", line, err, convErr)
	}
	if !waitUntil(5*time.Second, func() bool { return !alive(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the program (pid %d) outlived basis", pid)
	}
}

// scriptCommand returns script(1), which runs a command with a
// pseudo-terminal as its controlling terminal; the test is skipped when
// there is none, unless CI is set.
func scriptCommand(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("script(1) is needed (Debian: bsdutils):", err)
		}
		t.Skip("no script(1) to give the test a terminal")
	}
	return path
}

// A spawn command cannot type into the terminal basis runs in: under a
// terminal, the probe run directly types into it (the control), and the
// same probe as a spawn command cannot even open /dev/tty.
func TestSpawnCommandCannotTypeIntoTheTerminal(t *testing.T) {
	script := scriptCommand(t)
	w := newProcWorld(t, false)
	input := filepath.Join(w.dir, "input.json")
	write(t, input, spawnInput(ttyProbeBinary))
	tests := []struct {
		name, command string
		typed         bool
		says          string
	}{
		{name: "the probe run directly", command: fmt.Sprintf("'%s'", ttyProbeBinary), typed: true, says: "typed through /dev/tty"},
		{name: "the probe as a spawn command", command: fmt.Sprintf("'%s' -C '%s' call spawn @'%s' --approve allow", basisBinary, w.ws, input),
			says: "open /dev/tty: no such device or address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(script, "-qec", tt.command+" > '"+out+"' 2>&1", "/dev/null")
			cmd.Env = w.env
			scriptOut, err := cmd.CombinedOutput()
			raw, readErr := os.ReadFile(out)
			if readErr != nil {
				t.Fatalf("no output (%v); script: %v\n%s", readErr, err, scriptOut)
			}
			got := string(raw)
			if typed := strings.Contains(got, "typed"); typed != tt.typed {
				t.Fatalf("typed into the terminal: %t, want %t; output:\n%s", typed, tt.typed, got)
			}
			if !strings.Contains(got, tt.says) {
				t.Errorf("output:\n%s\nwant %q", got, tt.says)
			}
		})
	}
}
