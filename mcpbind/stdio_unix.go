//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/basis-go/basis/subprocess"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stderrTailSize is how much of a server's stderr is kept for messages.
const stderrTailSize = 64 << 10

// defaultCloseGrace is how long a closing stdio server has to exit after
// its stdin is closed before its whole process group is killed.
const defaultCloseGrace = 2 * time.Second

// stdioTransport starts a server program and speaks MCP over its stdin
// and stdout, with what the SDK's CommandTransport does not do: the child
// leads a session of its own, with no controlling terminal (so it cannot
// type into the operator's), and so a process group of its own, which is
// killed whole on close (the SDK signals only the direct child, so an npx
// wrapper's real server would outlive it); on Linux it dies with this
// process; a sandbox may start it (from a confined thread); and its
// stderr is read into a bounded tail for messages.
type stdioTransport struct {
	cmd   *exec.Cmd
	grace time.Duration
	tail  *tailBuffer
	// tool is the name the server's program goes by for the sandbox.
	tool string
	// sandbox, when set, confines the program (ManagerOptions.Sandbox).
	sandbox subprocess.Confiner
	// track, when set, starts the server (ManagerOptions.Track).
	track func(cmd *exec.Cmd, start func() error) (untrack func(), err error)
	// stderrDone is closed when the stderr pipe reaches EOF: every
	// process holding it has exited.
	stderrDone chan struct{}

	mu   sync.Mutex
	conn *groupConn
}

func newStdioTransport(l *launch, baseEnv []string, grace time.Duration, redact func(string) string) *stdioTransport {
	cmd := exec.Command(l.command, l.args...)
	cmd.Env = append(append([]string(nil), baseEnv...), l.env...)
	cmd.Dir = l.cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	ownSession(cmd.SysProcAttr)
	return &stdioTransport{cmd: cmd, grace: grace, tail: &tailBuffer{max: stderrTailSize, redact: redact}, stderrDone: make(chan struct{})}
}

// confine readies the command to run confined and returns how to start
// it and what to release once the server has exited.
func (t *stdioTransport) confine() (start func() error, release func(), err error) {
	start, release = t.cmd.Start, func() {}
	if t.sandbox == nil {
		return start, release, nil
	}
	c, err := t.sandbox(t.tool, true, t.cmd.Dir)
	if err != nil {
		return nil, nil, err
	}
	if c != nil && c.Confine != nil {
		st, rel, err := c.Confine(t.cmd)
		if err != nil {
			return nil, nil, err
		}
		if st != nil {
			// The sandbox starts the program itself (from a thread it
			// confined first): starting it any other way would run it
			// unconfined.
			start = st
		}
		if rel != nil {
			release = rel
		}
	}
	// The server's session, and so its process group, is what closing
	// kills: a confinement that replaced the attributes must not lose it.
	if t.cmd.SysProcAttr == nil {
		t.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	ownSession(t.cmd.SysProcAttr)
	return start, release, nil
}

// Connect starts the program.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// An *os.File, so exec hands the descriptor to the child and Wait does
	// not wait for a copying goroutine that a grandchild holding stderr
	// would keep alive.
	t.cmd.Stderr = w
	stdout, err := t.cmd.StdoutPipe()
	var stdin io.WriteCloser
	if err == nil {
		stdin, err = t.cmd.StdinPipe()
	}
	start, release, cerr := t.confine()
	if err == nil && cerr != nil {
		err = fmt.Errorf("confining the server: %w", cerr)
	}
	if err != nil {
		w.Close()
		r.Close()
		close(t.stderrDone)
		if stdout != nil {
			stdout.Close()
		}
		if stdin != nil {
			stdin.Close()
		}
		return nil, err
	}
	untrack := func() {}
	if t.track != nil {
		var un func()
		un, err = t.track(t.cmd, start)
		if un != nil {
			untrack = un
		}
	} else {
		err = start()
	}
	w.Close()
	if err != nil {
		r.Close()
		stdout.Close()
		stdin.Close()
		close(t.stderrDone)
		release()
		untrack()
		return nil, err
	}
	go func() {
		// stderr reaches EOF when every process holding it has exited:
		// then the confinement's leftovers (a per-run temp dir) can go.
		defer release()
		defer close(t.stderrDone)
		defer r.Close()
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			t.tail.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	// Closing the connection closes the server's stdin, which asks it to
	// exit; its stdout is closed once it has been waited for.
	conn, err := (&mcp.IOTransport{Reader: io.NopCloser(stdout), Writer: stdin}).Connect(ctx)
	if err != nil {
		t.kill()
		_ = t.cmd.Wait()
		untrack()
		return nil, err
	}
	gc := &groupConn{Connection: conn, cmd: t.cmd, pgid: t.cmd.Process.Pid, grace: t.grace, untrack: untrack}
	t.mu.Lock()
	t.conn = gc
	t.mu.Unlock()
	return gc, nil
}

// stderr returns the tail of the server's stderr, first waiting up to
// wait for every holder of the pipe to exit, so a crash's last words are
// in it.
func (t *stdioTransport) stderr(wait time.Duration) string {
	if wait > 0 {
		select {
		case <-t.stderrDone:
		case <-time.After(wait):
		}
	}
	return t.tail.String()
}

// ownSession makes the server a session leader with no controlling
// terminal, and so the leader of its process group. Setpgid stays off:
// the setpgid that would follow setsid fails for a session leader.
func ownSession(attr *syscall.SysProcAttr) {
	attr.Setsid = true
	attr.Setpgid, attr.Pgid = false, 0
	attr.Setctty, attr.Foreground = false, false
	// The SDK starts the program from an ordinary goroutine, whose thread
	// lives as long as this process: the parent-death signal, which
	// follows the forking thread, comes only when this process dies.
	dieWithParent(attr)
}

// kill ends the whole process group now, whether or not the session was
// ever set up.
func (t *stdioTransport) kill() {
	if p := t.cmd.Process; p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

// groupConn closes the SDK's connection (which closes the child's stdin
// and waits for it) and, after the grace period or as soon as that
// returns, kills the whole process group, so nothing the server started
// outlives it.
type groupConn struct {
	mcp.Connection
	cmd   *exec.Cmd
	pgid  int
	grace time.Duration
	// untrack is called once the server has been waited for and its
	// group killed (Options.Track).
	untrack func()

	once sync.Once
	err  error
}

// Close implements [mcp.Connection].
func (c *groupConn) Close() error {
	c.once.Do(func() {
		done := make(chan error, 1)
		go func() {
			err := c.Connection.Close()
			if werr := c.cmd.Wait(); err == nil {
				err = werr
			}
			// The server has exited: what it leaves goes with its group.
			_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
			c.untrack()
			done <- err
		}()
		timer := time.NewTimer(c.grace)
		defer timer.Stop()
		select {
		case err := <-done:
			c.err = err
		case <-timer.C:
			_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
			select {
			case c.err = <-done:
			case <-time.After(time.Second):
				c.err = errors.New("the server did not exit after it was killed")
			}
		}
		// A server that exits on its own, or is killed, has done what
		// closing asks: its exit status is no failure of Close.
		var exit *exec.ExitError
		if errors.As(c.err, &exit) || errors.Is(c.err, os.ErrProcessDone) {
			c.err = nil
		}
	})
	return c.err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu     sync.Mutex
	max    int
	buf    []byte
	redact func(string) string
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns the tail with every configured secret cut out.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	s := string(b.buf)
	b.mu.Unlock()
	if b.redact != nil {
		s = b.redact(s)
	}
	return s
}
