//go:build linux

package e2e_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/basis-go/basis/e2e"
)

// A shell that starts a sleep: both are this process's descendants, the
// sleep its grandchild; once the group is killed, neither is.
func TestDescendantsAndReadProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & echo $! > "+filepath.Join(dir, "pid")+"; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var kids []e2e.Process
	for range 100 {
		var err error
		if kids, err = e2e.Descendants(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		// The shell's child is named sleep once it has executed it.
		if len(kids) >= 2 && kids[1].Name == "sleep" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(kids) != 2 || kids[0].PID != cmd.Process.Pid || kids[1].PPID != cmd.Process.Pid || kids[1].Name != "sleep" {
		t.Fatalf("descendants = %v; want the shell %d and its sleep", kids, cmd.Process.Pid)
	}
	self, err := e2e.ReadProcess(os.Getpid())
	if err != nil || self.PID != os.Getpid() || self.PPID != os.Getppid() {
		t.Errorf("ReadProcess(self) = %+v, %v", self, err)
	}

	sleep := kids[1].PID
	cmd.Process.Kill()
	cmd.Wait()
	// The orphaned sleep is reparented, no longer below us, but alive.
	if p, err := e2e.ReadProcess(sleep); err != nil || p.Name != "sleep" {
		t.Fatalf("the sleep should outlive its shell: %+v, %v", p, err)
	}
	if kids, _ := e2e.Descendants(os.Getpid()); len(kids) != 0 {
		t.Errorf("descendants after the shell died = %v; want none", kids)
	}
	if p, err := os.FindProcess(sleep); err == nil {
		p.Kill()
	}
	for range 100 {
		if _, err := e2e.ReadProcess(sleep); errors.Is(err, e2e.ErrNoProcess) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d is still in the table after SIGKILL", sleep)
}

func TestOpenFilesCountsThisProcesssDescriptors(t *testing.T) {
	before, err := e2e.OpenFiles(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	after, err := e2e.OpenFiles(os.Getpid())
	f.Close()
	if err != nil || after != before+1 {
		t.Errorf("OpenFiles: %d before opening a file, %d after (%v); want one more", before, after, err)
	}
	if _, err := e2e.OpenFiles(1 << 30); !errors.Is(err, e2e.ErrNoProcess) {
		t.Errorf("OpenFiles of no process: %v; want ErrNoProcess", err)
	}
	if _, err := e2e.ReadMemory(1 << 30); !errors.Is(err, e2e.ErrNoProcess) {
		t.Errorf("ReadMemory of no process: %v; want ErrNoProcess", err)
	}
}
