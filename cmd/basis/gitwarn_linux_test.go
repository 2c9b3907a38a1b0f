//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal (Linux's /dev/ptmx) and returns its
// slave's path and a function that returns what was shown on it so far.
func openPTY(t *testing.T) (string, *os.File, func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	raw, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if cerr := raw.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}); cerr != nil || err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v %v", cerr, err)
	}
	var mu sync.Mutex
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// The slave stays open, so reading the master never ends in EIO
	// between questions.
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-done
	})
	return slave.Name(), master, func() string {
		mu.Lock()
		defer mu.Unlock()
		return shown.String()
	}
}

// The terminal's question about !git status shows what the repository's
// git config makes git run.
func TestTerminalQuestionShowsGitConfigPrograms(t *testing.T) {
	ws, config := gitWorkspace(t, fsmonitorConfig)
	tty, master, shown := openPTY(t)
	var stdout, stderr bytes.Buffer
	e := basisEnv(ws, config, &stdout, &stderr)
	e.interactive = func() bool { return true }
	e.tty = tty
	exited := make(chan int, 1)
	go func() { exited <- run(context.Background(), []string{"call", "spawn", `{"input": "!git status"}`}, e) }()
	asked := waitUntil(30*time.Second, func() bool {
		select {
		case code := <-exited:
			t.Fatalf("basis exited %d before asking; terminal:\n%s\nstderr:\n%s", code, shown(), stderr.String())
		default:
		}
		return strings.Contains(shown(), "[d] deny always: ")
	})
	if !asked {
		t.Fatalf("no question on the terminal; it shows:\n%q", shown())
	}
	if _, err := master.WriteString("n"); err != nil {
		t.Fatal(err)
	}
	if code := <-exited; code != exitRefused {
		t.Errorf("exit %d after n; stderr:\n%s", code, stderr.String())
	}
	if q := shown(); !strings.Contains(q, "  warning: "+fsmonitorFound+"\r\n") {
		t.Errorf("the question does not warn about core.fsmonitor:\n%s", q)
	}
}
