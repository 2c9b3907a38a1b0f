package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// keptThread is an OS thread confined once for a spec, with the call
// directory its Landlock domain lets programs write, kept for later calls
// of the same spec: making and confining a thread (its capabilities
// dropped one by one, a Landlock ruleset of some forty rules, the socket
// filter) was most of what a sandboxed start cost a privileged process.
// One call at a time uses it; between calls its directory is emptied and
// given back to this process's user alone.
//
// A thread is kept only for a call no Watch listens to (the domain's
// audit records name the thread it was made on), and taken again only if
// every path its rules name is still the file it was confined with: the
// kernel binds a mount and a Landlock rule to a file, not a name, so a
// protected path replaced since (a .git removed and made again) would not
// be read-only in the thread's mount namespace, and a writable directory
// replaced would not be writable.
type keptThread struct {
	key string
	tmp *callTemp
	// held holds each path its rules name (see ruledPaths) open (O_PATH)
	// as it was when the thread was confined: a held file's inode number
	// cannot be given to another file, so a path still naming that number
	// names that file.
	held []heldPath
	// handoff carries each start to the thread and its outcome back; nil
	// until the thread runs, and once it has ended.
	handoff *handoff
}

type heldPath struct {
	fd       int
	dev, ino uint64
}

// maxKeptThreads bounds the idle threads a process keeps.
const maxKeptThreads = 8

var kept struct {
	sync.Mutex
	idle []*keptThread
	// seen holds the keys of calls this process has started: a thread is
	// kept from a key's second call on, so a process that makes one call
	// (basis call) leaves no thread, and no directory, behind at its exit.
	seen map[string]bool
}

// keptThreadFor returns the thread for a call of sp (its spec before its
// directory is added to Write): an idle one, a new one, or nil for a
// kind's first call, which starts from a thread of its own as before.
func keptThreadFor(sp spec) (*keptThread, error) {
	key, paths := keptKey(sp), ruledPaths(sp)
	if k := takeKeptThread(key, paths); k != nil {
		return k, nil
	}
	kept.Lock()
	first := !kept.seen[key]
	if first {
		if kept.seen == nil || len(kept.seen) >= 1024 {
			kept.seen = map[string]bool{} // bounded: a forgotten key costs one call
		}
		kept.seen[key] = true
	}
	kept.Unlock()
	if first {
		return nil, nil
	}
	return newKeptThread(key, paths)
}

// ruledPaths are the paths a thread's rules name: what it protects, may
// write and, if its reads are limited, may read. sp is a call's spec
// before its directory is added to Write.
func ruledPaths(sp spec) []string {
	return slices.Concat(sp.Protect, sp.Write, sp.Read)
}

// keptKey is what two calls must share to use one thread: the spec (as
// for ruledPaths) but for the program and the tag. Written by hand, not
// by encoding/json, which took a sixth of a kept call's preparation (perf
// of BenchmarkSandboxedCat/empty):
// every field is written, lists with their length and each string
// followed by a NUL, which no path holds, so two specs that differ give
// two keys (TestKeptKeyCoversTheSpec).
func keptKey(sp spec) string {
	b := make([]byte, 0, 128)
	b = strconv.AppendInt(b, int64(sp.Version), 10)
	b = append(b, 0)
	b = append(append(b, sp.Revision...), 0)
	b = append(append(b, sp.Net...), 0)
	for _, on := range []bool{sp.UserNS, sp.LimitRead, sp.Probe} {
		b = strconv.AppendBool(b, on)
		b = append(b, 0)
	}
	for _, id := range []int{sp.UID, sp.GID} {
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, 0)
	}
	for _, list := range [][]string{sp.Write, sp.Protect, sp.Read} {
		b = strconv.AppendInt(b, int64(len(list)), 10)
		b = append(b, 0)
		for _, p := range list {
			b = append(append(b, p...), 0)
		}
	}
	return string(b)
}

// takeKeptThread returns an idle thread kept for key whose ruled paths
// are still the files it was confined with, or nil.
func takeKeptThread(key string, paths []string) *keptThread {
	for {
		kept.Lock()
		i := len(kept.idle) - 1
		for ; i >= 0 && kept.idle[i].key != key; i-- {
		}
		if i < 0 {
			kept.Unlock()
			return nil
		}
		k := kept.idle[i]
		kept.idle = append(kept.idle[:i], kept.idle[i+1:]...)
		kept.Unlock()
		if k.stillNames(paths) {
			return k
		}
		k.end()
	}
}

// newKeptThread makes the call directory of a thread not started yet.
func newKeptThread(key string, paths []string) (*keptThread, error) {
	tmp, err := newCallTemp(callTempBase())
	if err != nil {
		return nil, err
	}
	k := &keptThread{key: key, tmp: tmp}
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			k.key = "" // never taken again
			break
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			k.key = ""
			break
		}
		k.held = append(k.held, heldPath{fd: fd, dev: uint64(st.Dev), ino: st.Ino})
	}
	return k, nil
}

// stillNames reports whether paths name, one by one, the files the
// thread holds.
func (k *keptThread) stillNames(paths []string) bool {
	if len(paths) != len(k.held) {
		return false
	}
	for i, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || uint64(st.Dev) != k.held[i].dev || st.Ino != k.held[i].ino {
			return false
		}
	}
	return true
}

// used reports whether the thread has started a program before: taken
// again, every path its rules name was just found to be the file it was
// confined with.
func (k *keptThread) used() bool { return k.handoff != nil }

// start starts cmd from the thread, confining a new one as sp says on
// first use.
func (k *keptThread) start(cmd *exec.Cmd, sp spec) error {
	if k.handoff == nil {
		h, err := newHandoff()
		if err != nil {
			return err
		}
		confined := make(chan error, 1)
		trampoline.GoOnChildlessThread(func() {
			err := confineThread(sp)
			confined <- err
			if err != nil {
				h.closeServing()
				return // the thread ends with its goroutine
			}
			h.serve()
		})
		if err := <-confined; err != nil {
			h.close()
			return err
		}
		k.handoff = h
	}
	return k.handoff.start(cmd)
}

// handoff passes a start to a kept thread and its outcome back through
// two pipes, which the thread and the caller wait on in a blocking read.
// A channel to a goroutine locked to its thread has the scheduler park
// and wake that thread, and then the caller's: each wake may land on an
// idle processor, which on a virtual machine means waiting for the host
// to run it again. A pipe's writer wakes its reader as one about to wait
// itself, so the kernel runs the two in turn on the writer's processor.
// The cmd and the error go through atomics, which also tell the race
// detector what the pipes order.
type handoff struct {
	ask, answer [2]int // pipes: [0] read, [1] write
	cmd         atomic.Pointer[exec.Cmd]
	err         atomic.Pointer[error]
}

func newHandoff() (*handoff, error) {
	h := &handoff{}
	if err := unix.Pipe2(h.ask[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("sandbox: a pipe to the kept thread: %w", err)
	}
	if err := unix.Pipe2(h.answer[:], unix.O_CLOEXEC); err != nil {
		unix.Close(h.ask[0])
		unix.Close(h.ask[1])
		return nil, fmt.Errorf("sandbox: a pipe to the kept thread: %w", err)
	}
	return h, nil
}

// serve starts, on the kept thread, each command asked for, until close.
func (h *handoff) serve() {
	defer h.closeServing()
	for receive(h.ask[0]) {
		err := h.cmd.Load().Start()
		h.err.Store(&err)
		if !send(h.answer[1]) {
			return
		}
	}
}

// start has the thread start cmd and returns what cmd.Start returned.
// One start at a time: a kept thread serves one call.
func (h *handoff) start(cmd *exec.Cmd) error {
	h.cmd.Store(cmd)
	if !send(h.ask[1]) || !receive(h.answer[0]) {
		return errors.New("sandbox: the kept thread is gone")
	}
	return *h.err.Load()
}

// close closes the caller's ends, which ends the thread's serve.
func (h *handoff) close() {
	unix.Close(h.ask[1])
	unix.Close(h.answer[0])
}

// closeServing closes the thread's ends.
func (h *handoff) closeServing() {
	unix.Close(h.ask[0])
	unix.Close(h.answer[1])
}

// send writes a byte to fd, and receive reads one; each is false when
// the other end is closed.
func send(fd int) bool    { return oneByte(fd, unix.Write) }
func receive(fd int) bool { return oneByte(fd, unix.Read) }

func oneByte(fd int, op func(int, []byte) (int, error)) bool {
	for {
		n, err := op(fd, []byte{0})
		if err != unix.EINTR {
			return err == nil && n == 1
		}
	}
}

// release ends the call that used the thread. Once the program has
// exited, its PID namespace is empty (the kernel ends the rest before
// the first process's exit completes), so nothing writes the directory
// any more: the thread is kept for the next call if the directory is
// emptied and restored. Otherwise it ends, and the directory is removed.
func (k *keptThread) release(cmd *exec.Cmd) {
	if k.key != "" && k.handoff != nil && exited(cmd.Process) && k.restore() == nil {
		kept.Lock()
		if len(kept.idle) < maxKeptThreads {
			kept.idle = append(kept.idle, k)
			kept.Unlock()
			return
		}
		kept.Unlock()
	}
	k.end()
}

// exited reports whether p, a child of this process, has exited: it is a
// zombie, or was waited for (then it is no child any more). Its
// ProcessState is not read: whoever waits for it may not have told this
// goroutine. A pid reused since by another child of this process reads
// as running, which only costs keeping the thread.
func exited(p *os.Process) bool {
	if p == nil {
		return false
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == unix.ECHILD {
		return true
	}
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// restore gives the directory back to the user it was made for alone
// and empties it. A program may have opened it to others: its mode goes back
// to 0700, and ACLs a program added go (an access ACL would be masked by
// that mode anyway; a default one would be inherited by what the next
// program creates).
func (k *keptThread) restore() error {
	st, ok := stillThere(k.tmp.path, k.tmp.fd)
	if !ok {
		return errors.New("the call directory was replaced")
	}
	if uid, gid := k.tmp.uid, k.tmp.gid; int(st.Uid) != uid || int(st.Gid) != gid {
		if err := unix.Fchown(k.tmp.fd, uid, gid); err != nil {
			return err
		}
	}
	if st.Mode&0o7777 != 0o700 {
		if err := unix.Fchmod(k.tmp.fd, 0o700); err != nil {
			return err
		}
	}
	// A directory with no extended attribute at all has no ACL: one
	// question instead of a removal per kind.
	if n, err := unix.Flistxattr(k.tmp.fd, nil); err != nil || n > 0 {
		for _, acl := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
			if err := unix.Fremovexattr(k.tmp.fd, acl); err != nil && err != unix.ENODATA && err != unix.EOPNOTSUPP {
				return err
			}
		}
	}
	// The held descriptor is read from its start: an empty directory
	// (the usual case) costs no path lookup, open or sort.
	names, err := dirNames(k.tmp.fd)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := os.RemoveAll(filepath.Join(k.tmp.path, name)); err != nil {
			return err
		}
	}
	return nil
}

// dirNames lists the entries of the directory open at fd, but "." and
// "..", reading it from its start.
func dirNames(fd int) ([]string, error) {
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return nil, err
	}
	var names []string
	var buf [4096]byte
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// end ends the thread, whose last program has been waited for (the
// parent-death signal of a program still running from it kills it), and
// removes its directory.
func (k *keptThread) end() {
	if k.handoff != nil {
		k.handoff.close()
		k.handoff = nil
	}
	for _, h := range k.held {
		unix.Close(h.fd)
	}
	k.held = nil
	k.tmp.remove()
}
