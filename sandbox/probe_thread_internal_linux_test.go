package sandbox

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// ProbeThread says what a thread may do, field by field: root may make
// all three namespaces, and the network namespace it made is the shared
// one, open, with a different inode from this thread's; any other user
// may make none (unprivileged, a thread cannot enter a user namespace):
// TestUnprivileged runs it as uid 65534.
func TestProbeThread(t *testing.T) {
	p := trampoline.ProbeThread()
	if os.Geteuid() != 0 {
		for name, err := range map[string]error{"Net": p.Net, "PID": p.PID, "Mounts": p.Mounts} {
			if !errors.Is(err, unix.EPERM) {
				t.Errorf("unprivileged, %s = %v, want EPERM", name, err)
			}
		}
		return
	}
	if p.Net != nil || p.PID != nil || p.Mounts != nil {
		t.Fatalf("as root, the probe failed: %+v", p)
	}
	fd, err := trampoline.SharedNetNamespace()
	if err != nil {
		t.Fatalf("SharedNetNamespace after the probe: %v", err)
	}
	var shared, own unix.Stat_t
	if err := unix.Fstat(fd, &shared); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat("/proc/thread-self/ns/net", &own); err != nil {
		t.Fatal(err)
	}
	if shared.Ino == own.Ino {
		t.Errorf("the shared network namespace is this thread's (inode %d)", own.Ino)
	}
}
