package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

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
// every path it protects is still the file it mounted read-only: a
// protected path replaced since (a .git removed and made again) would not
// be covered by the thread's mount namespace.
type keptThread struct {
	key string
	tmp *callTemp
	// protected holds each protected path open (O_PATH) as it was when
	// the thread was confined: a held file's inode number cannot be given
	// to another file, so a path still naming that number names that file.
	protected []heldPath
	starts    chan *exec.Cmd // nil until the thread runs, and once it has ended
	started   chan error
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

// keptThreadFor returns the thread for a call of key: an idle one, a new
// one, or nil for a key's first call, which starts from a thread of its
// own as before.
func keptThreadFor(key string, protect []string) (*keptThread, error) {
	if k := takeKeptThread(key, protect); k != nil {
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
	return newKeptThread(key, protect)
}

// keptKey is what two calls must share to use one thread: the spec but
// for the call directory (Write[0]), the program and the tag.
func keptKey(sp spec) string {
	sp.Program, sp.Tag = "", ""
	sp.Write = sp.Write[1:]
	key, _ := json.Marshal(sp)
	return string(key)
}

// takeKeptThread returns an idle thread kept for key whose protected
// paths are still the files it protects, or nil.
func takeKeptThread(key string, protect []string) *keptThread {
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
		if k.stillProtects(protect) {
			return k
		}
		k.end()
	}
}

// newKeptThread makes the call directory of a thread not started yet.
func newKeptThread(key string, protect []string) (*keptThread, error) {
	tmp, err := newCallTemp(callTempBase())
	if err != nil {
		return nil, err
	}
	k := &keptThread{key: key, tmp: tmp}
	for _, p := range protect {
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
		k.protected = append(k.protected, heldPath{fd: fd, dev: uint64(st.Dev), ino: st.Ino})
	}
	return k, nil
}

// stillProtects reports whether protect names, one by one, the files the
// thread protects.
func (k *keptThread) stillProtects(protect []string) bool {
	if len(protect) != len(k.protected) {
		return false
	}
	for i, p := range protect {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || uint64(st.Dev) != k.protected[i].dev || st.Ino != k.protected[i].ino {
			return false
		}
	}
	return true
}

// start starts cmd from the thread, confining a new one as sp says on
// first use.
func (k *keptThread) start(cmd *exec.Cmd, sp spec) error {
	if k.starts == nil {
		starts, started := make(chan *exec.Cmd), make(chan error)
		confined := make(chan error, 1)
		trampoline.GoOnChildlessThread(func() {
			err := confineThread(sp)
			confined <- err
			if err != nil {
				return // the thread ends with its goroutine
			}
			for c := range starts {
				started <- c.Start()
			}
		})
		if err := <-confined; err != nil {
			return err
		}
		k.starts, k.started = starts, started
	}
	k.starts <- cmd
	return <-k.started
}

// release ends the call that used the thread: the program, waited for,
// is gone with its PID namespace, so nothing writes the directory any
// more. The thread is kept for the next call if the directory is
// emptied and restored; otherwise it ends, and the directory is removed.
func (k *keptThread) release(cmd *exec.Cmd) {
	if k.key != "" && k.starts != nil && cmd.ProcessState != nil && k.restore() == nil {
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

// restore gives the directory back to this process's user alone (a
// program may have opened it to others, ACLs included: a mode of 0700
// masks them) and empties it.
func (k *keptThread) restore() error {
	if !stillThere(k.tmp.path, k.tmp.fd) {
		return errors.New("the call directory was replaced")
	}
	if err := unix.Fchown(k.tmp.fd, os.Geteuid(), os.Getegid()); err != nil {
		return err
	}
	if err := unix.Fchmod(k.tmp.fd, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(k.tmp.path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(k.tmp.path, e.Name())); err != nil {
			return err
		}
	}
	if rest, err := os.ReadDir(k.tmp.path); err != nil || len(rest) > 0 {
		return errors.New("the call directory could not be emptied")
	}
	return nil
}

// end ends the thread, whose last program has been waited for (the
// parent-death signal of a program still running from it kills it), and
// removes its directory.
func (k *keptThread) end() {
	if k.starts != nil {
		close(k.starts)
		k.starts = nil
	}
	for _, h := range k.protected {
		unix.Close(h.fd)
	}
	k.protected = nil
	k.tmp.remove()
}
