package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// How a Watch hears the kernel's Landlock denials (see [Watch]): a
// NETLINK_AUDIT socket subscribed to the read-only multicast group, which
// receives every audit record the kernel emits (CAP_AUDIT_READ), while
// the call's program runs. The thread that restricts itself for the call
// (basis's own, or the trampoline's) takes a name made for the call
// first: Landlock's AUDIT_LANDLOCK_DOMAIN record of the domain names the
// process (pid) and thread name (comm) that made it, and every access
// record names its domain. The kernel delivers records asynchronously, so
// after a failed run the Watch sends a marker through the same queue —
// another subscription to the group, which the kernel records
// (AUDIT_EVENT_LISTENER) with the name of the thread that made it — and
// reads until it arrives: everything the program caused was queued
// before it.

// auditSyncBound bounds the wait for the marker: a queue that dropped it
// (the kernel's backlog overflowing) ends the wait here, with what
// arrived so far.
const auditSyncBound = 2 * time.Second

// auditUnreadable is set once this process was refused a subscription
// to the audit records (no CAP_AUDIT_READ): no call listens again.
var auditUnreadable atomic.Bool

// auditNames numbers the names of domains and markers.
var auditNames atomic.Uint64

// auditName is a thread name (comm, at most 15 bytes) no other call of
// this process takes at the same time, and that no one can guess ahead:
// prefix, a number and random bits.
func auditName(prefix string) string {
	n := auditNames.Add(1)<<24 | rand.Uint64()&(1<<24-1)
	return fmt.Sprintf("%s%012x", prefix, n&(1<<48-1))
}

func (w *Watch) prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	if w.sb.policy.Mode == Off {
		return w.sb.Prepare(cmd) // no Landlock, nothing to hear
	}
	l := listen()
	if l == nil {
		return w.sb.Prepare(cmd)
	}
	started, end, err := w.sb.prepare(cmd, false, l.tag)
	if err != nil {
		l.close()
		return nil, nil, err
	}
	start = func() error {
		err := started()
		if err == nil {
			l.child.Store(int64(cmd.Process.Pid))
		}
		return err
	}
	return start, func() {
		end()
		if cmd.ProcessState == nil || cmd.ProcessState.Success() {
			l.close()
			return
		}
		pids := map[int]bool{os.Getpid(): true}
		if cmd.Process != nil {
			pids[cmd.Process.Pid] = true
		}
		for _, d := range l.collect(pids) {
			w.add(d)
		}
	}, nil
}

// listener is one call's subscription to the audit records.
type listener struct {
	f     *os.File
	tag   string       // the name the call's restricting thread takes
	child atomic.Int64 // the program's pid, once started

	mu      sync.Mutex
	mark    string        // the marker's thread name, once sent
	marked  chan struct{} // closed when the marker arrived
	domains map[string]int
	pending []pendingAccess // recent access records of domains not known yet
	found   []pendingAccess // access records of the call's domains
	done    chan struct{}   // the reader ended
}

type pendingAccess struct {
	domain string
	denial Denial
}

// maxPending bounds the access records kept of domains not known yet: a
// domain's first record comes right before the record naming its maker.
const maxPending = 32

// maxFound bounds the access records kept of the call's domains.
const maxFound = 256

// listen subscribes to the audit records for one call; nil where the
// audit is off or this process may not read it.
func listen() *listener {
	if auditUnreadable.Load() {
		return nil
	}
	if !auditMayBeOn() {
		return nil
	}
	// Not allowed to ask (no CAP_AUDIT_CONTROL): the subscription says
	// whether reading is.
	fd, err := subscribe()
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPROTONOSUPPORT) {
			auditUnreadable.Store(true)
		}
		return nil
	}
	l := &listener{
		f: os.NewFile(uintptr(fd), "audit"), tag: auditName("bll"),
		marked: make(chan struct{}), domains: map[string]int{}, done: make(chan struct{}),
	}
	go l.read()
	return l
}

// subscribe opens a non-blocking audit socket subscribed to the
// read-only multicast group.
func subscribe() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_AUDIT)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (unix.AUDIT_NLGRP_READLOG - 1)}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// auditCheckEvery is how long an answer of the kernel to whether its
// audit is on holds: asking costs a round trip through the audit
// subsystem (about 0.2 ms here), more than a call should pay where audit
// is off, and an operator who turns it on while basis runs sees paths
// named within this.
const auditCheckEvery = 10 * time.Second

var auditCheck struct {
	sync.Mutex
	at time.Time // zero: never asked, or forgotten
	on bool
}

// auditMayBeOn reports whether the kernel's audit is on, or may be: a
// process that may not ask (no CAP_AUDIT_CONTROL) finds out by
// subscribing.
func auditMayBeOn() bool {
	auditCheck.Lock()
	defer auditCheck.Unlock()
	if auditCheck.at.IsZero() || time.Since(auditCheck.at) >= auditCheckEvery {
		on, err := auditEnabled()
		auditCheck.at, auditCheck.on = time.Now(), on || err != nil
	}
	return auditCheck.on
}

// forgetAuditCheck makes the next call ask the kernel again.
func forgetAuditCheck() {
	auditCheck.Lock()
	auditCheck.at = time.Time{}
	auditCheck.Unlock()
}

// auditEnabled asks the kernel whether the audit subsystem is on
// (AUDIT_GET, which needs CAP_AUDIT_CONTROL).
func auditEnabled() (bool, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	req := make([]byte, unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.AUDIT_GET)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, err
	}
	buf := make([]byte, 512)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		if n < unix.NLMSG_HDRLEN+8 {
			return false, errors.New("short audit status")
		}
		switch binary.NativeEndian.Uint16(buf[4:]) {
		case unix.NLMSG_ERROR:
			if e := int32(binary.NativeEndian.Uint32(buf[unix.NLMSG_HDRLEN:])); e != 0 {
				return false, unix.Errno(-e)
			}
			continue // an acknowledgement
		case unix.AUDIT_GET:
			// struct audit_status: mask, then enabled.
			return binary.NativeEndian.Uint32(buf[unix.NLMSG_HDRLEN+4:]) != 0, nil
		}
		return false, errors.New("unexpected audit status reply")
	}
}

// read takes the records until the socket is closed.
func (l *listener) read() {
	defer close(l.done)
	buf := make([]byte, 1<<16)
	for {
		n, err := l.f.Read(buf)
		if errors.Is(err, unix.ENOBUFS) {
			continue // the socket overflowed and records were lost; read on
		}
		if err != nil {
			return // closed
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			size := int(binary.NativeEndian.Uint32(b))
			if size < unix.NLMSG_HDRLEN || size > len(b) {
				size = len(b)
			}
			l.take(binary.NativeEndian.Uint16(b[4:]), b[unix.NLMSG_HDRLEN:size])
			next := (size + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
			b = b[min(next, len(b)):]
		}
	}
}

// take handles one record.
func (l *listener) take(typ uint16, payload []byte) {
	switch typ {
	case unix.AUDIT_LANDLOCK_ACCESS, unix.AUDIT_LANDLOCK_DOMAIN, unix.AUDIT_EVENT_LISTENER:
	default:
		return
	}
	for len(payload) > 0 && payload[len(payload)-1] == 0 {
		payload = payload[:len(payload)-1]
	}
	rec := parseAuditRecord(string(payload))
	l.mu.Lock()
	defer l.mu.Unlock()
	switch typ {
	case unix.AUDIT_EVENT_LISTENER:
		if l.mark != "" && rec["comm"] == l.mark && rec["op"] == "connect" && rec["pid"] == strconv.Itoa(os.Getpid()) {
			select {
			case <-l.marked:
			default:
				close(l.marked)
			}
		}
	case unix.AUDIT_LANDLOCK_DOMAIN:
		id := rec["domain"]
		if rec["status"] != "allocated" || rec["comm"] != l.tag || id == "" || len(l.domains) >= maxPending {
			return
		}
		pid, err := strconv.Atoi(rec["pid"])
		// Made by this process (a thread restricted for the call) or by
		// the call's program (restricted in the trampoline): anyone else
		// who took the name fills nothing.
		if child := int(l.child.Load()); err != nil || pid != os.Getpid() && child != 0 && pid != child {
			return
		}
		l.domains[id] = pid
		kept := l.pending[:0]
		for _, p := range l.pending {
			if p.domain == id {
				l.keep(p)
			} else {
				kept = append(kept, p)
			}
		}
		l.pending = kept
	case unix.AUDIT_LANDLOCK_ACCESS:
		p := pendingAccess{domain: rec["domain"], denial: denialOf(rec)}
		if _, ours := l.domains[p.domain]; ours {
			l.keep(p)
			return
		}
		if len(l.pending) >= maxPending {
			l.pending = append(l.pending[:0], l.pending[1:]...)
		}
		l.pending = append(l.pending, p)
	}
}

// keep records an access of the call's domains; l.mu is held.
func (l *listener) keep(p pendingAccess) {
	if len(l.found) < maxFound {
		l.found = append(l.found, p)
	}
}

// collect waits until every record queued before now has arrived (at
// most auditSyncBound), ends the subscription and returns the denials of
// the call's domains: those a process in pids made.
func (l *listener) collect(pids map[int]bool) []Denial {
	mark := auditName("bmk")
	l.mu.Lock()
	l.mark = mark
	l.mu.Unlock()
	// Asked again, on this path only: with audit turned off since the
	// call began, no marker would come.
	if on, err := auditEnabled(); (on || err != nil) && sendMarker(mark) == nil {
		timer := time.NewTimer(auditSyncBound)
		select {
		case <-l.marked:
		case <-timer.C:
		}
		timer.Stop()
	}
	l.close()
	var out []Denial
	for _, p := range l.found {
		if pids[l.domains[p.domain]] {
			out = append(out, p.denial)
		}
	}
	return out
}

// close ends the subscription and waits for the reader.
func (l *listener) close() {
	_ = l.f.Close()
	<-l.done
}

// sendMarker subscribes to the audit group and unsubscribes again from a
// thread named name: the kernel records both, after everything queued
// before.
func sendMarker(name string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old [16]byte
		if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0); err != nil {
			errc <- err
			return // the thread ends with its goroutine, never reused
		}
		if err := trampoline.SetThreadName(name); err != nil {
			errc <- err
			return
		}
		fd, err := subscribe()
		if err == nil {
			unix.Close(fd)
		}
		if trampoline.SetThreadName(unix.ByteSliceToString(old[:])) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}
