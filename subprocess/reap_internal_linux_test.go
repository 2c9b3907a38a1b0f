package subprocess

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// An orphan handed to this process is listed by the main thread's children
// file and by the /proc scan used on kernels without such files.
func TestOrphansAreListed(t *testing.T) {
	if !reaping.Load() {
		t.Skip("ReapOrphans is off")
	}
	out, err := exec.Command("/bin/sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(orphan, syscall.SIGKILL)
		var status syscall.WaitStatus
		syscall.Wait4(orphan, &status, 0, nil)
	}()
	// The shell has been waited for: its orphan is ours already.
	if files, scan := children(), childrenByScan(); !slices.Contains(files, orphan) || !slices.Contains(scan, orphan) {
		t.Errorf("orphan %d: the children file lists %v, the scan %v", orphan, files, scan)
	}
}
