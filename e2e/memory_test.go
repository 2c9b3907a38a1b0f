//go:build linux

package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/e2e"
)

// memoryBound is the most resident memory basis may reach however much its
// tool prints: a tool's output is kept up to a cap and the rest is read
// and dropped.
const memoryBound = 64 << 20

// A declared tool that prints 1 GiB leaves basis's peak resident memory
// under 64 MiB. The peak is read twice: VmHWM of the basis process from
// /proc while it runs (the last reading is taken as late as the process
// lets us), and the rusage the kernel reports when basis is reaped, which
// is the larger of basis's own peak and its children's, so an upper bound.
func TestDeclaredToolPrinting1GiBKeepsBasisUnder64MiB(t *testing.T) {
	head, err := exec.LookPath("head")
	if err != nil {
		t.Fatal("this test needs head (coreutils):", err)
	}
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".basis/tools.json": fmt.Sprintf(`{"schema": 1, "tools": {"flood": {
		"description": "Prints 1 GiB of zero bytes.",
		"input_schema": {"type": "object"},
		"command": [%q, "-c", "1073741824", "/dev/zero"],
		"timeout_ms": 300000
	}}}`, head)})

	cmd := exec.Command(basisBinary, "-C", ws, "call", "flood", "{}", "--approve", "allow")
	cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + t.TempDir())
	var printed countingWriter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &printed, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var hwm int64
	readings := 0
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
poll:
	for {
		select {
		case waitErr = <-done:
			break poll
		case <-tick.C:
			if m, err := e2e.ReadMemory(cmd.Process.Pid); err == nil && m.Peak > 0 {
				hwm = max(hwm, m.Peak)
				readings++
			}
		}
	}
	// Success means head wrote all of its 1 GiB: had basis closed the pipe
	// early, head would have died of SIGPIPE and the call would have failed.
	if waitErr != nil {
		t.Fatalf("basis call flood: %v\nstderr: %s", waitErr, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage for the basis process")
	}
	maxrss := ru.Maxrss * 1024 // kilobytes on Linux
	t.Logf("basis printed %d bytes of the tool's 1 GiB; peak resident memory: VmHWM %.1f MiB (%d readings), rusage maxrss %.1f MiB (basis or its child, whichever is larger)",
		printed.n, mib(hwm), readings, mib(maxrss))
	if readings == 0 {
		t.Fatal("not one reading of basis's VmHWM was taken while it ran")
	}
	if hwm >= memoryBound || maxrss >= memoryBound {
		t.Errorf("basis's peak resident memory: VmHWM %.1f MiB, maxrss %.1f MiB; want both under %d MiB", mib(hwm), mib(maxrss), memoryBound>>20)
	}
	if printed.n >= 1<<30 {
		t.Errorf("basis printed all %d bytes: the tool's output was not capped", printed.n)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// countingWriter counts what is written to it and keeps none of it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
