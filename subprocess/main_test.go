//go:build unix

package subprocess_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// The test binary is also the programs some tests run: helperEnv names
// the part it plays, fifoEnv a FIFO it writes a line to once it is in
// place, so tests wait on it instead of on a clock.
const (
	helperEnv = "SUBPROCESS_TEST_HELPER"
	fifoEnv   = "SUBPROCESS_TEST_FIFO"
	resultEnv = "SUBPROCESS_TEST_RESULT"
	// noReapEnv runs the tests without ReapOrphans: inChild sets it.
	noReapEnv = "SUBPROCESS_TEST_NO_REAP"
)

func TestMain(m *testing.M) {
	if helper := os.Getenv(helperEnv); helper != "" {
		os.Exit(runHelper(helper))
	}
	if os.Getenv(noReapEnv) == "" {
		if err := subprocess.ReapOrphans(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			fmt.Fprintln(os.Stderr, "ReapOrphans:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func runHelper(helper string) int {
	switch helper {
	case "escape-setpgid":
		// Leaves the run's process group, then stays.
		if err := syscall.Setpgid(0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "setpgid:", err)
			return 1
		}
		return signalAndStay()
	case "escape-doublefork":
		// Starts a grandchild in a session of its own and exits at once,
		// leaving it an orphan.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=escape-grandchild")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "escape-grandchild":
		return signalAndStay()
	case "tiocsti":
		return tiocsti()
	case "run-tiocsti":
		// The tiocsti helper, through Run, writing what it saw to the
		// result file.
		res, err := subprocess.Run(context.Background(), &subprocess.Cmd{
			Argv:    []string{os.Args[0]},
			Env:     []string{helperEnv + "=tiocsti"},
			Timeout: time.Minute,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return writeResult(fmt.Sprintf("%s%s", res.Stdout, res.Outcome))
	case "hold":
		// Runs a program that writes its pid to the FIFO and sleeps, and
		// waits for it: the test kills this process meanwhile.
		_, err := subprocess.Run(context.Background(), &subprocess.Cmd{
			Argv: []string{"/bin/sh", "-c", `echo $$ > "$1"; exec sleep 300`, "sh", os.Getenv(fifoEnv)},
			Env:  []string{"PATH=" + os.Getenv("PATH"), markerOf(os.Environ())},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		return 1
	}
	fmt.Fprintln(os.Stderr, "unknown helper", helper)
	return 2
}

// signalAndStay writes a line to the FIFO, then sleeps long past any test.
func signalAndStay() int {
	f, err := os.OpenFile(os.Getenv(fifoEnv), os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f.WriteString("in place\n")
	f.Close()
	time.Sleep(time.Hour)
	return 0
}

func writeResult(s string) int {
	if err := os.WriteFile(os.Getenv(resultEnv), []byte(s), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// markerName is the variable that marks the processes of one test.
const markerName = "SUBPROCESS_TEST_MARKER"

// newMarker returns an environment entry no other process carries.
func newMarker() string {
	b := make([]byte, 12)
	rand.Read(b)
	return markerName + "=" + hex.EncodeToString(b)
}

func markerOf(env []string) string {
	for _, e := range env {
		if strings.HasPrefix(e, markerName+"=") {
			return e
		}
	}
	return markerName + "=none"
}

// inChild reports whether the calling test runs in this process with
// ReapOrphans off. When it does not yet, inChild runs the test alone in a
// new test process without ReapOrphans, fails the test if that one did
// not pass, and returns false: the caller returns.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(noReapEnv) != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), noReapEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test without ReapOrphans (%v):\n%s", err, out)
	}
	return false
}

// markedProcesses lists the live processes whose environment holds marker
// (zombies have no environment left to read).
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
// (boundedly) only for the kernel to finish what it was told: a process
// already killed may take a moment to go.
func requireNoneMarked(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := markedProcesses(t, marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes of the run outlived it: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mkfifo makes a FIFO in a test directory.
func mkfifo(t *testing.T) string {
	t.Helper()
	path := t.TempDir() + "/fifo"
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
