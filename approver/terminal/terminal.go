//go:build unix

package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/basis-go/basis/approver"
	"golang.org/x/term"
)

// errNoTerminal: there is no terminal to ask at.
var errNoTerminal = errors.New("no terminal to ask at")

// DefaultTTY is the device a [Terminal] opens when it is given none: the
// controlling terminal of this process.
const DefaultTTY = "/dev/tty"

// Terminal asks the person at a terminal. It shows the tool, the side
// effect, the preview's Summary and Subject, the request's Warnings (such
// as a repository git config that names programs git runs), and reads
// exactly one key in raw mode:
//
//	y  allow once
//	a  allow this exact call for the rest of the session — or, when the
//	   gate proposed command rules (approver.Request.Proposed, shown in the
//	   question), allow what they cover
//	t  allow every call of this tool for the rest of the session
//	n  deny once
//	d  deny this exact call for the rest of the session
//
// Upper case works too. Any other key (Enter, Escape, Ctrl-C included)
// denies. Keys typed before the question appeared are discarded, so
// typing ahead cannot answer a question nobody has read.
//
// With no terminal — none given, /dev/tty cannot be opened, or what was
// given is not a terminal — Approve prints nothing anywhere and returns an
// error with a denial whose reason says "no terminal to ask at".
//
// Questions from concurrent calls are asked one at a time. A question ends
// when its context is done, with the terminal's mode restored; that needs a
// file that supports read deadlines, as one opened with [os.OpenFile] does
// (a file made by [os.NewFile] from a blocking descriptor may not, and then
// the read waits for a key). Use a *Terminal; its zero value asks at
// /dev/tty.
type Terminal struct {
	// TTY, when set, is the terminal to ask at. The caller keeps it open.
	// Tests pass one end of a pseudo-terminal here.
	TTY *os.File
	// Path is the device opened for each question when TTY is nil; empty
	// means DefaultTTY.
	Path string
	// SaveTo, when set, names where "always" answers are kept (the
	// operator's rules file): the a, t and d keys then answer with
	// [approver.Answer.Persist], so a gate with [approver.GateOptions.Save] writes them as
	// rules, and the echo says where. Empty keeps them for the session.
	SaveTo string

	mu sync.Mutex
}

// Approve asks one question. It returns when a key is pressed or ctx is
// done; the terminal's mode is restored either way.
func (t *Terminal) Approve(ctx context.Context, req approver.Request) (approver.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tty, closeTTY, err := t.open()
	if err != nil {
		return denyFor(err)
	}
	defer closeTTY()
	raw, err := tty.SyscallConn()
	if err != nil {
		return denyFor(errNoTerminal)
	}
	// The descriptor is used only inside Control: the file stays in
	// non-blocking mode, where read deadlines (and so cancellation) work,
	// and cannot be closed under us.
	var state *term.State
	ctlErr := raw.Control(func(fd uintptr) {
		if !term.IsTerminal(int(fd)) {
			err = errNoTerminal
			return
		}
		if state, err = term.MakeRaw(int(fd)); err != nil {
			err = fmt.Errorf("%w: the terminal cannot be put in raw mode: %w", errNoTerminal, err)
			return
		}
		_ = discardTypeahead(int(fd))
	})
	if err == nil {
		err = ctlErr
	}
	if err != nil {
		return denyFor(err)
	}
	defer raw.Control(func(fd uintptr) { _ = term.Restore(int(fd), state) })

	if _, err := tty.WriteString(question(req)); err != nil {
		return denyFor(fmt.Errorf("%w: writing the question: %w", errNoTerminal, err))
	}
	key, err := readKey(ctx, tty)
	if err != nil {
		if ctx.Err() != nil {
			_, _ = tty.WriteString("\r\n  (no answer; denied)\r\n")
			return denyFor(ctx.Err())
		}
		return denyFor(fmt.Errorf("%w: reading a key: %w", errNoTerminal, err))
	}
	answer, said := answer(key, req, t.SaveTo)
	_, _ = tty.WriteString(said + "\r\n")
	return answer, nil
}

// open returns the terminal file and how to let go of it.
func (t *Terminal) open() (*os.File, func(), error) {
	if t.TTY != nil {
		return t.TTY, func() {}, nil
	}
	path := t.Path
	if path == "" {
		path = DefaultTTY
	}
	// O_NOCTTY: asking at a terminal must not make it this process's
	// controlling terminal.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, errNoTerminal
	}
	return f, func() { f.Close() }, nil
}

// readKey reads one byte, giving up when ctx is done.
func readKey(ctx context.Context, tty *os.File) (byte, error) {
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		_ = tty.SetReadDeadline(time.Unix(1, 0)) // a time in the past
	})
	defer func() {
		if !stop() {
			// The deadline was set, or is being set; clear it for the
			// file's next user once it is.
			<-interrupted
			_ = tty.SetReadDeadline(time.Time{})
		}
	}()
	var buf [1]byte
	for {
		n, err := tty.Read(buf[:])
		if n == 1 {
			return buf[0], nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// denyFor is a denial whose reason is err's text, and err.
func denyFor(err error) (approver.Answer, error) {
	return approver.Answer{Decision: approver.Deny, Reason: err.Error()}, err
}
