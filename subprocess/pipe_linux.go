package subprocess

import (
	"os"
	"syscall"
)

// smallStdin is the most stdin newPipes writes before the program
// starts: one page, the least a pipe holds (a user past
// /proc/sys/fs/pipe-user-pages-soft gets pipes of one page).
const smallStdin = 4096

// pipe returns a pipe whose parent end goes through the runtime poller
// (so read and write deadlines apply) and whose child end is a plain
// blocking descriptor, since it is only handed to the program: os.Pipe
// registers both ends with the poller, and exec then makes the child's
// blocking again, a handful of system calls per stream for nothing.
func pipe(parentReads bool) (parent, child *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	pfd, cfd := fds[1], fds[0]
	if parentReads {
		pfd, cfd = fds[0], fds[1]
	}
	if err := syscall.SetNonblock(pfd, true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller and
	// leaves a blocking one alone.
	return os.NewFile(uintptr(pfd), "|parent"), os.NewFile(uintptr(cfd), "|child"), nil
}

// filledPipe returns the read end of a pipe that holds data (at most
// smallStdin bytes, which an empty pipe always takes without blocking)
// and whose write end is closed: the program reads data, then end of
// file.
func filledPipe(data []byte) (*os.File, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	for len(data) > 0 {
		n, err := syscall.Write(fds[1], data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
			return nil, os.NewSyscallError("write", err)
		}
		data = data[n:]
	}
	syscall.Close(fds[1])
	return os.NewFile(uintptr(fds[0]), "|child"), nil
}
