//go:build linux

package mcpbind_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// statOf returns the fields of /proc/<pid>/stat after the command name:
// state, ppid, pgrp, session, tty_nr, ...
func statOf(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
}

// A stdio server leads a session of its own, so it has no controlling
// terminal to type into, and leads its process group, which closing
// kills; a confinement that replaces the attributes changes neither.
func TestStdioServerLeadsASessionWithoutATerminal(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("confinement replaces the attributes: %t", replace), func(t *testing.T) {
			var mu sync.Mutex
			var pid int
			opts := &mcpbind.ManagerOptions{Track: func(cmd *exec.Cmd, start func() error) (func(), error) {
				err := start()
				mu.Lock()
				pid = cmd.Process.Pid
				mu.Unlock()
				return func() {}, err
			}}
			if replace {
				opts.Sandbox = func(string, bool, string) (*subprocess.Confinement, error) {
					return &subprocess.Confinement{Confine: func(cmd *exec.Cmd) (func() error, func(), error) {
						cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
						return nil, func() {}, nil
					}}, nil
				}
			}
			m := newManager(t, opts, stdioServer("ts"))
			if err := m.StartAll(context.Background()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			f := statOf(t, pid)
			want := []string{strconv.Itoa(pid), strconv.Itoa(pid), "0"}
			if diff := cmp.Diff(want, f[2:5]); diff != "" {
				t.Errorf("the server's process group, session and terminal (-want +got):\n%s", diff)
			}
		})
	}
}

// Track starts the server (the command is not started before it, and is
// after), and untrack comes once the server has been waited for; a start
// that fails is untracked at once.
func TestStdioTrackStartsAndUntracksTheServer(t *testing.T) {
	var mu sync.Mutex
	var events []string
	opts := &mcpbind.ManagerOptions{Track: func(cmd *exec.Cmd, start func() error) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, fmt.Sprintf("track, started before: %t", cmd.Process != nil))
		err := start()
		events = append(events, fmt.Sprintf("started: %t", cmd.Process != nil))
		return func() {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("untrack, waited for: %t", cmd.ProcessState != nil))
		}, err
	}}
	m := newManager(t, opts, stdioServer("ts"))
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	broken := newManager(t, opts, mcpbind.ServerConfig{Name: "broken", Type: mcpbind.TypeStdio, Command: "/nonexistent/server"})
	if err := broken.StartAll(context.Background()); !errors.Is(err, mcpbind.ErrStart) {
		t.Fatalf("starting a missing program: %v, want ErrStart", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"track, started before: false", "started: true", "untrack, waited for: true",
		"track, started before: false", "started: false", "untrack, waited for: false",
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A stdio server dies with the process that started it, even when that
// one is killed with SIGKILL and cannot close it.
func TestStdioServerDiesWithItsHost(t *testing.T) {
	fifo := t.TempDir() + "/fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), holdEnv+"="+fifo, serverEnv+"="+serverBin)
	host.Stderr = os.Stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fifo) // until the host has written the server's pid
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	pid, convErr := strconv.Atoi(strings.TrimSpace(line))
	if pids, err := os.ReadFile(fifo + ".pids"); err == nil {
		// The grandchild is no child of the host's: the kernel has no
		// reason to kill it.
		if f := strings.Fields(string(pids)); len(f) == 2 {
			if grandchild, err := strconv.Atoi(f[1]); err == nil {
				defer syscall.Kill(grandchild, syscall.SIGKILL)
			}
		}
	}
	host.Process.Kill()
	host.Wait()
	if err != nil || convErr != nil {
		t.Fatalf("the server's pid: %q (%v, %v)", line, err, convErr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server (pid %d) outlived its host", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
