package approver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"
)

// DefaultTTY is the device a [Terminal] opens when it is given none: the
// controlling terminal of this process.
const DefaultTTY = "/dev/tty"

// Terminal asks the person at a terminal. It shows the tool, the side
// effect, the preview's Summary and Subject, and reads exactly one key in
// raw mode:
//
//	y  allow once
//	a  allow this exact call for the rest of the session — or, when the
//	   gate proposed command rules (Request.Proposed, shown in the
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
// given is not a terminal — Approve prints nothing anywhere and returns
// [ErrNoTerminal] with a denial whose reason says "no terminal to ask at".
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
	// [Answer.Persist], so a gate with [GateOptions.Save] writes them as
	// rules, and the echo says where. Empty keeps them for the session.
	SaveTo string

	mu sync.Mutex
}

// Approve asks one question. It returns when a key is pressed or ctx is
// done; the terminal's mode is restored either way.
func (t *Terminal) Approve(ctx context.Context, req Request) (Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tty, closeTTY, err := t.open()
	if err != nil {
		return denyFor(err)
	}
	defer closeTTY()
	raw, err := tty.SyscallConn()
	if err != nil {
		return denyFor(ErrNoTerminal)
	}
	// The descriptor is used only inside Control: the file stays in
	// non-blocking mode, where read deadlines (and so cancellation) work,
	// and cannot be closed under us.
	var state *term.State
	ctlErr := raw.Control(func(fd uintptr) {
		if !term.IsTerminal(int(fd)) {
			err = ErrNoTerminal
			return
		}
		if state, err = term.MakeRaw(int(fd)); err != nil {
			err = fmt.Errorf("%w: the terminal cannot be put in raw mode: %w", ErrNoTerminal, err)
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
		return denyFor(fmt.Errorf("%w: writing the question: %w", ErrNoTerminal, err))
	}
	key, err := readKey(ctx, tty)
	if err != nil {
		if ctx.Err() != nil {
			_, _ = tty.WriteString("\r\n  (no answer; denied)\r\n")
			return denyFor(ctx.Err())
		}
		return denyFor(fmt.Errorf("%w: reading a key: %w", ErrNoTerminal, err))
	}
	answer, said := keyAnswer(key, req, t.SaveTo)
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
		return nil, nil, ErrNoTerminal
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

// question renders the prompt. Raw mode turns off output processing, so
// lines end in "\r\n".
func question(req Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\r\nbasis: tool %s wants to act (side effect %s)\r\n", printable(req.Tool), req.Preview.SideEffect)
	if req.Preview.Summary != "" {
		fmt.Fprintf(&b, "  %s\r\n", printable(req.Preview.Summary))
	}
	if len(req.Preview.Subject) > 0 {
		fmt.Fprintf(&b, "  subject: %s\r\n", printable(string(req.Preview.Subject)))
	}
	if len(req.Proposed) > 0 {
		fmt.Fprintf(&b, "  always would allow: %s\r\n", printable(proposedText(req.Proposed)))
		b.WriteString("  [y] allow once  [a] always (the rule above)  [t] always this tool  [n] deny  [d] deny always: ")
		return b.String()
	}
	b.WriteString("  [y] allow once  [a] always this call  [t] always this tool  [n] deny  [d] deny always: ")
	return b.String()
}

// keyAnswer maps a key to an answer and the words echoed after it. With
// saveTo set, the "always" answers are kept there; otherwise for the
// session.
func keyAnswer(key byte, req Request, saveTo string) (Answer, string) {
	tool := req.Tool
	kept, persist := "for the rest of this session", false
	if saveTo != "" {
		kept, persist = "from now on (saved to "+printable(saveTo)+")", true
	}
	switch key {
	case 'y', 'Y':
		return Answer{Decision: Allow, Reason: "allowed once at the terminal"}, "y: allowed once"
	case 'a', 'A':
		if len(req.Proposed) > 0 {
			return Answer{Decision: AllowSession, Persist: persist, Reason: "allowed at the terminal", Remember: &Remember{Proposed: true}},
				"a: allowed; commands matching " + printable(proposedText(req.Proposed)) + " will not be asked about again " + kept
		}
		return Answer{Decision: AllowSession, Persist: persist, Reason: "allowed at the terminal"},
			"a: allowed; this exact call will not be asked about again " + kept
	case 't', 'T':
		return Answer{Decision: AllowSession, Persist: persist, Reason: fmt.Sprintf("every call of %s allowed at the terminal", tool), Remember: &Remember{Tool: true}},
			"t: allowed; calls of this tool will not be asked about again " + kept
	case 'n', 'N':
		return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied by the operator at the terminal", tool)}, "n: denied"
	case 'd', 'D':
		return Answer{Decision: DenySession, Persist: persist, Reason: fmt.Sprintf("tool %s denied by the operator at the terminal; do not ask for this call again", tool)},
			"d: denied; this exact call will be denied without asking " + kept
	}
	return Answer{Decision: Deny, Reason: fmt.Sprintf("tool %s denied: the key pressed at the terminal was not an answer", tool)}, "denied (not one of y a t n d)"
}

// proposedText lists proposed rules' commands: "go test *; tail *".
func proposedText(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = FormatCommand(r.Command)
	}
	return strings.Join(parts, "; ")
}
