package trampoline

import (
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GoOnChildlessThread runs f on a new goroutine locked to an OS thread
// that has no child process, and ends that thread with f (it is never
// unlocked: f changes it for good). Linux sends a child's parent-death
// signal when the thread that cloned it ends, and os/exec clones from
// whatever thread its goroutine runs on: ending a thread on which some
// other goroutine once started a program with Pdeathsig would kill that
// program. A thread that has children is held, so the runtime gives the
// next try another thread (a new one if need be), then handed back; so is
// the main thread.
func GoOnChildlessThread(f func()) {
	var held []chan struct{}
	defer func() {
		for _, h := range held {
			close(h)
		}
	}()
	for {
		fresh, hold := make(chan bool), make(chan struct{})
		go func() {
			runtime.LockOSThread()
			// Go cannot end the main thread: it parks it for good, and it
			// would stay changed (confined, in a call's mount namespace,
			// which /proc/self shows) for the process's life.
			if unix.Gettid() == unix.Getpid() || threadHasChildren() {
				fresh <- false
				<-hold
				runtime.UnlockOSThread()
				return
			}
			fresh <- true
			f()
		}()
		if <-fresh {
			return
		}
		held = append(held, hold)
	}
}

// threadHasChildren reports whether the calling thread, which must be
// locked, has child processes. A kernel without
// /proc/thread-self/children (CONFIG_PROC_CHILDREN) cannot tell; then
// it says no. It reads the file with plain system calls, into a buffer
// on the stack: os.ReadFile's stat, poller registration and allocation
// made this check a twentieth of a sandboxed start.
func threadHasChildren() bool {
	fd, err := unix.Open("/proc/thread-self/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [16]byte // "PID PID ... ": one digit is enough to tell
	for {
		n, err := unix.Read(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		return err == nil && len(strings.TrimSpace(string(buf[:n]))) > 0
	}
}

// sharedNet is the network namespace that confined starts from this
// process move their thread into: made once, loopback up, and held open.
// Creating a namespace costs about half a millisecond, entering one a few
// microseconds. Programs of different calls share its loopback; none of
// them can reach anything outside it.
var sharedNet struct {
	once sync.Once
	fd   int
	err  error
}

// SharedNetNamespace returns a descriptor of sharedNet, making it on first
// use on a throwaway thread (it fails for a process that may not create
// namespaces).
func SharedNetNamespace() (int, error) {
	sharedNet.once.Do(func() {
		done := make(chan struct{})
		GoOnChildlessThread(func() {
			defer close(done)
			makeSharedNet()
		})
		<-done
	})
	return sharedNet.fd, sharedNet.err
}

// makeSharedNet makes sharedNet by moving the calling thread, which is
// thrown away after, into a new network namespace.
func makeSharedNet() {
	if sharedNet.err = unix.Unshare(unix.CLONE_NEWNET); sharedNet.err != nil {
		sharedNet.fd = -1
		return
	}
	_ = loopbackUp()
	sharedNet.fd, sharedNet.err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// Probe is what a thread of this process may do: each field is nil when
// the thread could, or the kernel's answer.
type Probe struct {
	// Net: enter a new network namespace (sharedNet, made by the probe
	// when it was not yet).
	Net error
	// PID: have its children start in a new PID namespace.
	PID error
	// Mounts: make a mount namespace of its own.
	Mounts error
}

// ProbeThread tries what a confined start does on its thread, on one
// throwaway thread.
func ProbeThread() Probe {
	var p Probe
	done := make(chan struct{})
	GoOnChildlessThread(func() {
		defer close(done)
		sharedNet.once.Do(makeSharedNet)
		p.Net = sharedNet.err
		p.PID = unix.Unshare(unix.CLONE_NEWPID)
		p.Mounts = unix.Unshare(unix.CLONE_NEWNS)
	})
	<-done
	return p
}

// SetThreadName names the calling thread (its comm).
func SetThreadName(name string) error {
	b, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(b)), 0, 0, 0)
}
