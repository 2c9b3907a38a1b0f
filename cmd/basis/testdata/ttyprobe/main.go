//go:build unix

// Command ttyprobe tries to type into the terminal of whoever runs it, as a
// hostile tool would (TIOCSTI, issue 19): through /dev/tty, then through
// its standard streams. It prints what happened and exits 0 when a
// character was queued, 3 when none could be.
package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func inject(fd int) error {
	b := byte(' ')
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
		return errno
	}
	return nil
}

func main() {
	typed := false
	if fd, err := syscall.Open("/dev/tty", syscall.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		fmt.Printf("open /dev/tty: %v\n", err)
	} else if err := inject(fd); err != nil {
		fmt.Printf("TIOCSTI on /dev/tty: %v\n", err)
	} else {
		fmt.Println("typed through /dev/tty")
		typed = true
	}
	for fd := 0; fd <= 2; fd++ {
		if inject(fd) == nil {
			fmt.Printf("typed through fd %d\n", fd)
			typed = true
		}
	}
	if !typed {
		os.Exit(3)
	}
}
