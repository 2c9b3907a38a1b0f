package subprocess

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER, which the syscall
// package does not define on every architecture.
const prSetChildSubreaper = 36

func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return &os.SyscallError{Syscall: "prctl PR_SET_CHILD_SUBREAPER", Err: errno}
	}
	return nil
}

// dieWithParent asks the kernel to SIGKILL the program when its parent
// dies, even by SIGKILL. Linux sends the signal when the thread that
// forked the program ends, not the whole process: the caller must fork
// from a thread that lives as long as the program. Go ends a thread only
// when a goroutine locked to it returns: Run forks on its caller's
// goroutine, which, locked or not, waits in Run for the program; a thread
// left free may be locked by other code, which must not end a thread that
// has children (the sandbox's threads check /proc/thread-self/children).
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// orphans lists the children of this process that a sweep kills: those
// neither keep says to keep nor in this process's session.
func orphans(keep func(pid int) bool) []int {
	session, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		return nil
	}
	self, own := strconv.Itoa(os.Getpid()), strconv.Itoa(int(session))
	var out []int
	for _, pid := range children() {
		if keep(pid) {
			continue
		}
		// A program Run or Track started is in a session of its own, and
		// so is everything it starts; a child still in ours was started
		// by someone else in this process, who waits for it. And a pid
		// that is no longer our child's (it was waited for and reused
		// since it was listed) is none of ours.
		f, err := statFields(strconv.Itoa(pid))
		if err != nil || len(f) < 4 || f[1] != self || f[3] == own {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// children lists the children of this process's main thread, which is
// where the kernel hands every orphan (to the first thread of the process
// that is not exiting, and a Go program's main thread never ends), and
// the children of threads that ended; a program started from another,
// live thread is not listed, but that one is no orphan. On a kernel
// without children files it lists every child, from all of /proc.
func children() []int {
	fd, err := childrenFile()
	if err != nil {
		return childrenByScan()
	}
	raw, err := preadAll(fd)
	if err != nil {
		return childrenByScan()
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childrenFile is the main thread's children file, opened once: every
// run ends with a sweep, and reading the file again from its start is one
// system call where opening it walks a path through /proc each time.
var childrenFile = sync.OnceValues(func() (int, error) {
	return syscall.Open("/proc/self/task/"+strconv.Itoa(os.Getpid())+"/children", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
})

// preadAll reads fd, a /proc file, from its start to its end.
func preadAll(fd int) ([]byte, error) {
	var buf [4096]byte
	var out []byte
	for {
		n, err := syscall.Pread(fd, buf[:], int64(len(out)))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// readProcFile reads a /proc file with plain system calls: every run
// ends with a sweep, and os.ReadFile's stat and poller registration
// cost more than the read.
func readProcFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return preadAll(fd)
}

// childrenByScan finds this process's children in every /proc/PID/stat,
// for kernels built without CONFIG_PROC_CHILDREN.
func childrenByScan() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, err := statFields(e.Name()); err == nil && len(f) > 1 && f[1] == strconv.Itoa(self) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name: state, ppid, pgrp, session, ...
func statFields(pid string) ([]string, error) {
	raw, err := readProcFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, err
	}
	// The command name is in parentheses and may hold anything, ")"
	// included; the last ")" ends it.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil, errors.New("unexpected /proc stat format")
	}
	return strings.Fields(string(raw[i+1:])), nil
}
