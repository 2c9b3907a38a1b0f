//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Process is one entry of the process table.
type Process struct {
	// PID and PPID are the process's id and its parent's.
	PID, PPID int
	// Name is the executable's name as the kernel keeps it (at most 15
	// bytes), such as "node" or "basis".
	Name string
}

// String returns "name[pid]".
func (p Process) String() string { return p.Name + "[" + strconv.Itoa(p.PID) + "]" }

// ErrNoProcess means the process asked about is not in the process table
// (it exited, or never existed).
var ErrNoProcess = errors.New("no such process")

// Processes lists every process in the process table, in pid order.
// Processes that exit while the table is read are left out.
func Processes() ([]Process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading the process table: %w", err)
	}
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := ReadProcess(pid)
		if err != nil {
			continue // gone since the directory was read
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Process) int { return a.PID - b.PID })
	return out, nil
}

// ReadProcess reads one process's entry. It returns an error wrapping
// [ErrNoProcess] when there is none.
func ReadProcess(pid int) (Process, error) {
	fields, err := status(pid)
	if err != nil {
		return Process{}, err
	}
	ppid, err := strconv.Atoi(fields["PPid"])
	if err != nil {
		return Process{}, fmt.Errorf("process %d: PPid %q: %w", pid, fields["PPid"], err)
	}
	return Process{PID: pid, PPID: ppid, Name: fields["Name"]}, nil
}

// Descendants lists the processes below pid: its children, their
// children, and so on, in pid order. A process that outlived its parent
// is reparented (to init or a subreaper) and is no longer found here; use
// [WithEnv] for those.
func Descendants(pid int) ([]Process, error) {
	all, err := Processes()
	if err != nil {
		return nil, err
	}
	children := map[int][]Process{}
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []Process
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	slices.SortFunc(out, func(a, b Process) int { return a.PID - b.PID })
	return out, nil
}

// WithEnv lists the processes whose environment holds key=value, in pid
// order. A child inherits its parent's environment, so a variable set for
// a server basis starts marks the server and everything it starts, however
// they were reparented. Processes whose environment this process may not
// read (another user's, or a non-dumpable one such as basis itself) are
// not listed.
func WithEnv(key, value string) ([]Process, error) {
	all, err := Processes()
	if err != nil {
		return nil, err
	}
	want := []byte(key + "=" + value)
	var out []Process
	for _, p := range all {
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// Memory is a process's resident memory, in bytes.
type Memory struct {
	// Resident is the resident set size now (VmRSS).
	Resident int64
	// Peak is the highest resident set size so far (VmHWM).
	Peak int64
}

// ReadMemory reads pid's resident and peak memory. /proc/<pid>/status is
// readable for every process, non-dumpable ones included.
func ReadMemory(pid int) (Memory, error) {
	fields, err := status(pid)
	if err != nil {
		return Memory{}, err
	}
	rss, err := kilobytes(fields["VmRSS"])
	if err != nil {
		return Memory{}, fmt.Errorf("process %d: VmRSS: %w", pid, err)
	}
	hwm, err := kilobytes(fields["VmHWM"])
	if err != nil {
		return Memory{}, fmt.Errorf("process %d: VmHWM: %w", pid, err)
	}
	return Memory{Resident: rss, Peak: hwm}, nil
}

// Threads returns how many threads pid has.
func Threads(pid int) (int, error) {
	fields, err := status(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(fields["Threads"])
}

// OpenFiles returns how many file descriptors pid has open. For another
// process it needs the right to inspect it (the same user, and the process
// not non-dumpable, or root).
func OpenFiles(pid int) (int, error) {
	entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return 0, fmt.Errorf("listing the descriptors of process %d: %w", pid, err)
	}
	return len(entries), nil
}

// status reads /proc/<pid>/status into its "Key: value" fields.
func status(pid int) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields, nil
}

// kilobytes parses a status value such as "1234 kB" into bytes.
func kilobytes(v string) (int64, error) {
	n, unit, _ := strings.Cut(v, " ")
	if unit != "kB" {
		return 0, fmt.Errorf("%q is not a size in kB", v)
	}
	k, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return 0, err
	}
	return k * 1024, nil
}
