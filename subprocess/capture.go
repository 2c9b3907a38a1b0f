//go:build unix

package subprocess

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"time"
)

// testHookReaderStart, when set, is called by each reader before it reads
// anything: tests stall the readers with it.
var testHookReaderStart func()

// maxLine bounds one line handed to a line callback; a longer line arrives
// in pieces of this size.
const maxLine = 8 << 10

// capture reads one pipe into a bounded buffer, handing complete lines of
// what it keeps to onLine as they arrive.
type capture struct {
	limit int
	// closeAtLimit closes the pipe once the limit is passed (stdout: the
	// writer then gets SIGPIPE); otherwise the rest is read and discarded
	// (stderr: a chatty log must not kill a program).
	closeAtLimit bool
	onLine       func(string)

	buf       bytes.Buffer
	truncated bool
	partial   []byte
}

// drain reads f until EOF, the drain deadline, or the limit, then closes
// f. At the deadline it still takes, without waiting, what the pipe holds:
// the poller reports a passed deadline before it reads, so a reader that
// was slow to get there would otherwise lose output already written. A
// pipe that then has no EOF yet is held by a writer that escaped the
// run, so the output may lack what it writes next: it counts as
// truncated.
func (c *capture) drain(f *os.File) {
	defer f.Close()
	if testHookReaderStart != nil {
		testHookReaderStart()
	}
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 && !c.keep(chunk[:n]) && c.closeAtLimit {
			break
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.drainBuffered(f, chunk)
		}
		if err != nil {
			break
		}
	}
	c.flush()
}

// drainBuffered reads what f holds now, never waiting for more, and marks
// the output truncated unless that reaches EOF.
func (c *capture) drainBuffered(f *os.File, chunk []byte) {
	eof := false
	// A raw read checks the deadline first too; it is over anyway.
	_ = f.SetReadDeadline(time.Time{})
	rc, err := f.SyscallConn()
	if err == nil {
		// The function reports true at once every time, so Read never
		// waits on the poller: the pipe is non-blocking.
		err = rc.Read(func(fd uintptr) bool {
			for {
				n, err := syscall.Read(int(fd), chunk)
				switch {
				case n > 0:
					// Past the limit the rest is not kept anyway, and the
					// output is already marked truncated.
					if !c.keep(chunk[:n]) {
						return true
					}
				case err == syscall.EINTR:
				case err == nil:
					eof = true
					return true
				default: // EAGAIN: a writer still holds the pipe
					return true
				}
			}
		})
	}
	if !eof || err != nil {
		c.truncated = true
	}
}

// keep stores what fits under the limit and reports whether everything
// did.
func (c *capture) keep(p []byte) bool {
	room := c.limit - c.buf.Len()
	if room <= 0 {
		c.truncated = true
		return false
	}
	fits := p
	if len(p) > room {
		fits = p[:room]
		c.truncated = true
	}
	c.buf.Write(fits)
	c.lines(fits)
	return !c.truncated
}

func (c *capture) lines(p []byte) {
	if c.onLine == nil {
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			for len(c.partial) >= maxLine {
				c.onLine(string(c.partial[:maxLine]))
				c.partial = append(c.partial[:0], c.partial[maxLine:]...)
			}
			return
		}
		c.partial = append(c.partial, p[:i]...)
		c.emit()
		p = p[i+1:]
	}
}

func (c *capture) emit() {
	line := c.partial
	for len(line) > maxLine {
		c.onLine(string(line[:maxLine]))
		line = line[maxLine:]
	}
	c.onLine(string(bytes.TrimSuffix(line, []byte("\r"))))
	c.partial = c.partial[:0]
}

func (c *capture) flush() {
	if c.onLine != nil && len(c.partial) > 0 {
		c.emit()
	}
}
