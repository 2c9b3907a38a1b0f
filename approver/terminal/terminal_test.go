//go:build linux

// The pseudo-terminal these tests open is Linux's /dev/ptmx.

package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// pty is a real pseudo-terminal: the Terminal asks at slave, and the test
// plays the person at master, reading what was shown and typing keys.
type pty struct {
	master, slave *os.File
	mu            sync.Mutex
	shown         bytes.Buffer
	changed       chan struct{} // a value after each read: something new was shown
	done          chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	raw, err := master.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
				n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
			}
		})
		err = errors.Join(err, cerr)
	}
	if err != nil {
		master.Close()
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatalf("opening the pseudo-terminal's slave: %v", err)
	}
	p := &pty{master: master, slave: slave, changed: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.shown.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default: // a waiter has not looked yet; it will see this too
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-p.done
	})
	return p
}

func (p *pty) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shown.String()
}

// waitFor waits until the terminal has shown text count times.
func (p *pty) waitFor(t *testing.T, text string, count int) {
	t.Helper()
	p.waitUntil(t, fmt.Sprintf("%q (%d times)", text, count), func(shown string) bool { return strings.Count(shown, text) >= count })
}

// waitUntil waits, woken by each read of the terminal, until what it
// has shown satisfies ok; 10 s without that fails the test.
func (p *pty) waitUntil(t *testing.T, what string, ok func(shown string) bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for !ok(p.output()) {
		select {
		case <-p.changed:
		case <-p.done:
			if !ok(p.output()) {
				t.Fatalf("the terminal closed before it showed %s; it showed:\n%q", what, p.output())
			}
			return
		case <-timeout.C:
			t.Fatalf("the terminal never showed %s; it showed:\n%q", what, p.output())
		}
	}
}

func (p *pty) press(t *testing.T, key string) {
	t.Helper()
	if _, err := p.master.WriteString(key); err != nil {
		t.Fatal(err)
	}
}

func (p *pty) lflag(t *testing.T) uint32 {
	t.Helper()
	var tio *unix.Termios
	var err error
	raw, _ := p.slave.SyscallConn()
	raw.Control(func(fd uintptr) { tio, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag
}

const promptEnd = "[d] deny always: "

type asked struct {
	answer approver.Answer
	err    error
}

func askAsync(ctx context.Context, term *terminal.Terminal, req approver.Request) <-chan asked {
	out := make(chan asked, 1)
	go func() {
		a, err := term.Approve(ctx, req)
		out <- asked{a, err}
	}()
	return out
}

func TestTerminalKeys(t *testing.T) {
	const saveTo = "/home/me/.config/basis/rules.json"
	tests := []struct {
		key, saveTo string
		want        approver.Answer
		says        string
	}{
		{"y", "", approver.Answer{Decision: approver.Allow, Reason: "allowed once at the terminal"}, "y: allowed once"},
		{"Y", "", approver.Answer{Decision: approver.Allow, Reason: "allowed once at the terminal"}, "y: allowed once"},
		{"a", "", approver.Answer{Decision: approver.AllowSession, Reason: "allowed at the terminal"}, "a: allowed; this exact call will not be asked about again for the rest of this session"},
		{"t", "", approver.Answer{Decision: approver.AllowSession, Reason: "every call of spawn allowed at the terminal", Remember: &approver.Remember{Tool: true}}, "t: allowed; calls of this tool will not be asked about again for the rest of this session"},
		{"n", "", approver.Answer{Decision: approver.Deny, Reason: "tool spawn denied by the operator at the terminal"}, "n: denied"},
		{"d", "", approver.Answer{Decision: approver.DenySession, Reason: "tool spawn denied by the operator at the terminal; do not ask for this call again"}, "d: denied; this exact call will be denied without asking for the rest of this session"},
		{"\r", "", approver.Answer{Decision: approver.Deny, Reason: "tool spawn denied: the key pressed at the terminal was not an answer"}, "denied (not one of y a t n d)"},
		{"\x03", "", approver.Answer{Decision: approver.Deny, Reason: "tool spawn denied: the key pressed at the terminal was not an answer"}, "denied (not one of y a t n d)"},
		// With somewhere to save them, "always" answers are kept, and the
		// echo says where.
		{"a", saveTo, approver.Answer{Decision: approver.AllowSession, Persist: true, Reason: "allowed at the terminal"}, "a: allowed; this exact call will not be asked about again from now on (saved to " + saveTo + ")"},
		{"t", saveTo, approver.Answer{Decision: approver.AllowSession, Persist: true, Reason: "every call of spawn allowed at the terminal", Remember: &approver.Remember{Tool: true}}, "t: allowed; calls of this tool will not be asked about again from now on (saved to " + saveTo + ")"},
		{"d", saveTo, approver.Answer{Decision: approver.DenySession, Persist: true, Reason: "tool spawn denied by the operator at the terminal; do not ask for this call again"}, "d: denied; this exact call will be denied without asking from now on (saved to " + saveTo + ")"},
		{"y", saveTo, approver.Answer{Decision: approver.Allow, Reason: "allowed once at the terminal"}, "y: allowed once"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q saving to %q", tt.key, tt.saveTo), func(t *testing.T) {
			p := openPTY(t)
			before := p.lflag(t)
			term := &terminal.Terminal{TTY: p.slave, SaveTo: tt.saveTo}
			got := askAsync(context.Background(), term, terminalRequest(t))
			p.waitFor(t, promptEnd, 1)
			if p.lflag(t)&(unix.ICANON|unix.ECHO) != 0 {
				t.Error("the terminal is not in raw mode while asking")
			}
			p.press(t, tt.key)
			res := <-got
			if res.err != nil {
				t.Fatal(res.err)
			}
			if diff := cmp.Diff(tt.want, res.answer); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			p.waitFor(t, tt.says, 1)
			if after := p.lflag(t); after != before {
				t.Errorf("terminal local flags %#x after asking, %#x before", after, before)
			}
		})
	}
}

func TestTerminalShowsThePreview(t *testing.T) {
	p := openPTY(t)
	req := terminalRequest(t)
	req.Preview.Summary = "run cargo test \x1b[2J\x1b[Hin /repo"
	got := askAsync(context.Background(), &terminal.Terminal{TTY: p.slave}, req)
	p.waitFor(t, promptEnd, 1)
	p.press(t, "n")
	<-got
	shown := p.output()
	for _, want := range []string{
		"basis: tool spawn wants to act (side effect process)\r\n",
		`  run cargo test \u001b[2J\u001b[Hin /repo` + "\r\n",
		"  subject: " + cargoTest + "\r\n",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the question does not show %q; it showed:\n%q", want, shown)
		}
	}
	if strings.Contains(shown, "\x1b") {
		t.Errorf("an escape sequence from the preview reached the terminal: %q", shown)
	}
}

func TestTerminalDiscardsTypeahead(t *testing.T) {
	p := openPTY(t)
	p.press(t, "y")
	p.waitFor(t, "y", 1) // echoed: the key is in the terminal's input queue
	got := askAsync(context.Background(), &terminal.Terminal{TTY: p.slave}, terminalRequest(t))
	p.waitFor(t, promptEnd, 1)
	p.press(t, "n")
	if res := <-got; res.err != nil || res.answer.Decision != approver.Deny {
		t.Errorf("answer = %+v, %v; a key typed before the question answered it", res.answer, res.err)
	}
}

func TestTerminalCancelRestoresTheTerminal(t *testing.T) {
	p := openPTY(t)
	before := p.lflag(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	term := &terminal.Terminal{TTY: p.slave}
	res := <-askAsync(ctx, term, terminalRequest(t))
	if !errors.Is(res.err, context.DeadlineExceeded) || res.answer.Decision != approver.Deny {
		t.Errorf("Approve = %+v, %v; want a denial for the deadline", res.answer, res.err)
	}
	if after := p.lflag(t); after != before {
		t.Errorf("terminal local flags %#x after a cancelled question, %#x before", after, before)
	}
	// The same terminal still answers the next question: the deadline
	// set to interrupt the read was cleared.
	got := askAsync(context.Background(), term, terminalRequest(t))
	p.waitFor(t, promptEnd, 2)
	p.press(t, "y")
	if res := <-got; res.err != nil || res.answer.Decision != approver.Allow {
		t.Errorf("next question = %+v, %v", res.answer, res.err)
	}
}

func TestTerminalAsksOneQuestionAtATime(t *testing.T) {
	p := openPTY(t)
	term := &terminal.Terminal{TTY: p.slave}
	first := askAsync(context.Background(), term, terminalRequest(t))
	second := askAsync(context.Background(), term, terminalRequest(t))
	p.waitFor(t, promptEnd, 1)
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(p.output(), promptEnd); n != 1 {
		t.Fatalf("%d questions on the terminal at once", n)
	}
	p.press(t, "y")
	p.waitFor(t, promptEnd, 2)
	p.press(t, "n")
	a, b := <-first, <-second
	if decisions := []approver.Decision{a.answer.Decision, b.answer.Decision}; !cmp.Equal(decisions, []approver.Decision{approver.Allow, approver.Deny}) &&
		!cmp.Equal(decisions, []approver.Decision{approver.Deny, approver.Allow}) {
		t.Errorf("answers = %v", decisions)
	}
}
