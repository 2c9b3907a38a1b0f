//go:build unix

package subprocess_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/subprocess"
)

// A reader that gets to the pipe only after the program has exited and
// the drain deadline has passed still gets every byte the program wrote:
// what is in the pipe is read, the deadline notwithstanding.
func TestOutputWrittenBeforeExitArrivesWhenTheReaderIsLate(t *testing.T) {
	// Less than a pipe holds, so the program exits without a reader.
	stdout := bytes.Repeat([]byte("0123456789abcdef"), 2500)
	stderr := bytes.Repeat([]byte("warning\n"), 1000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out"), stdout, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "err"), stderr, 0o600); err != nil {
		t.Fatal(err)
	}
	defer subprocess.StallReaders(-time.Hour)()
	res := run(t, t.Context(), &subprocess.Cmd{
		Argv: sh(`cat "$1"; cat "$2" >&2`, "sh", filepath.Join(dir, "out"), filepath.Join(dir, "err")),
		Env:  hostEnv(),
	})
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v", res.Outcome)
	}
	if !bytes.Equal(res.Stdout, stdout) || res.StdoutTruncated {
		t.Errorf("stdout: %d of %d bytes, truncated %t; want all of it, not truncated", len(res.Stdout), len(stdout), res.StdoutTruncated)
	}
	if !bytes.Equal(res.Stderr, stderr) || res.StderrTruncated {
		t.Errorf("stderr: %d of %d bytes, truncated %t; want all of it, not truncated", len(res.Stderr), len(stderr), res.StderrTruncated)
	}
}

// When a writer that escaped the run still holds the pipe at the drain
// deadline, what was written arrives and the result says the output may
// be cut short. (Without ReapOrphans: with it, the writer is swept before
// the drain.)
func TestOutputCutShortByAnEscapedWriterIsTruncated(t *testing.T) {
	if !inChild(t) {
		return
	}
	marker := newMarker()
	fifo := mkfifo(t)
	defer subprocess.StallReaders(-time.Hour)()
	res := run(t, t.Context(), &subprocess.Cmd{
		// The escaped writer writes, tells the program, and stays.
		Argv: sh(`setsid sh -c 'printf escaped; echo > "$1"; exec sleep 300' sh "$1" & read x < "$1"; printf ' main'`, "sh", fifo),
		Env:  append(hostEnv(), marker),
	})
	for _, pid := range markedProcesses(t, marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if !res.Outcome.Success() {
		t.Fatalf("outcome = %v", res.Outcome)
	}
	if got := string(res.Stdout); !strings.Contains(got, "escaped") || !strings.Contains(got, "main") {
		t.Errorf("stdout = %q, want what both wrote", got)
	}
	if !res.StdoutTruncated {
		t.Error("StdoutTruncated = false although a writer still held the pipe when the drain ended")
	}
}
