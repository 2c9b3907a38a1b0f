package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"testing"
)

// A handoff starts each command it is handed and returns what Start
// returned, the error included; once closed, a start
// says the thread is gone, the serving goroutine returns, and none of its
// four descriptors is left open.
func TestHandoffStartsAndClosesEverything(t *testing.T) {
	before := openDescriptors(t)
	h, err := newHandoff()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.serve()
	}()

	cmd := exec.Command("/bin/true")
	if err := h.start(cmd); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	missing := exec.Command("/nonexistent/program")
	if err := h.start(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("start of a missing program: %v, want its not-exist error", err)
	}

	h.close()
	<-served
	if err := h.start(exec.Command("/bin/true")); err == nil {
		t.Fatal("a start after close succeeded")
	}
	if after := openDescriptors(t); after != before {
		t.Errorf("%d descriptors open before the handoff, %d after it was closed", before, after)
	}
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}
