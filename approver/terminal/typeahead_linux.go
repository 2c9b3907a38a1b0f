package terminal

import "golang.org/x/sys/unix"

// discardTypeahead drops input the terminal received but nobody has read.
func discardTypeahead(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
