//go:build unix

package subprocess

import (
	"bytes"
	"os"
)

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

// drain reads f until EOF, a read deadline, or the limit, then closes f.
func (c *capture) drain(f *os.File) {
	defer f.Close()
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 && !c.keep(chunk[:n]) && c.closeAtLimit {
			break
		}
		if err != nil {
			break
		}
	}
	c.flush()
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
