package mcpbind_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMeter starts counting the CPU time this process and its children
// use, and returns what reports it: this process's from getrusage, each
// live child's from the scheduler's account of its threads
// (/proc/<pid>/task/*/schedstat, in nanoseconds), which counts a child
// still running, unlike RUSAGE_CHILDREN. The children are looked for
// outside the span this process's own time is read over: the look costs
// CPU of its own. False where /proc cannot tell.
func cpuMeter() func() (cpuUse, bool) {
	c0, ok0 := childrenCPU()
	s0 := selfCPU()
	return func() (cpuUse, bool) {
		s1 := selfCPU()
		c1, ok1 := childrenCPU()
		return cpuUse{self: s1 - s0, children: c1 - c0}, ok0 && ok1
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childrenCPU sums the time on a CPU of every thread of this process's
// live children.
func childrenCPU() (time.Duration, bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 0, false
	}
	me := strconv.Itoa(os.Getpid())
	var total time.Duration
	for _, stat := range stats {
		data, err := os.ReadFile(stat)
		if err != nil {
			continue // ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) < 2 || fields[1] != me {
			continue
		}
		tasks, _ := filepath.Glob(filepath.Join(filepath.Dir(stat), "task", "*", "schedstat"))
		for _, task := range tasks {
			s, err := os.ReadFile(task)
			if err != nil {
				continue
			}
			onCPU, err := strconv.ParseInt(strings.Fields(string(s))[0], 10, 64)
			if err != nil {
				return 0, false
			}
			total += time.Duration(onCPU)
		}
	}
	return total, true
}
