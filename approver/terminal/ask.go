//go:build unix

package terminal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/basis-go/basis/contract/display"
	"golang.org/x/term"
)

// maxTries is how often a field is asked again after an answer it cannot
// take before the form is declined.
const maxTries = 3

// errTooManyTries: a field was answered maxTries times with nothing it
// takes.
var errTooManyTries = errors.New("no answer the form takes")

// AskForm asks the person at the terminal to fill the form server
// requested (an MCP elicitation in form mode): message, then each field
// of schema in the order it lists them, with its type, its choices and its
// default in brackets, and finally whether to send the answers.
//
// The terminal stays in its own line-editing mode. Enter keeps a field's
// default, or leaves an optional field out; an answer the field cannot
// take (a wrong type, not one of the choices, out of its minimum and
// maximum) is asked again, and after three the form is declined. Ctrl-D
// cancels. Everything the server wrote is made printable first.
//
// The answer is always one to send back. The error is set when the
// person did not give it: schema is no form, or there is no terminal
// (FormDecline, with nothing shown), or ctx ended while a field was asked
// (FormCancel).
func (t *Terminal) AskForm(ctx context.Context, server, message string, schema json.RawMessage) (FormAnswer, error) {
	f, err := readForm(schema)
	if err != nil {
		return FormAnswer{Action: FormDecline}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	a, done, err := t.asker(ctx)
	if err != nil {
		return FormAnswer{Action: FormDecline}, err
	}
	defer done()
	return a.askForm(server, message, f)
}

// AskURL asks the person at the terminal whether to open the page url
// that server wants them to visit (an MCP elicitation in URL mode),
// showing message. Yes is FormAccept, and open, when set, opens the page
// (a browser); when it is nil or fails, the person is told to open it
// themselves. An empty answer is no, FormDecline; Ctrl-D is FormCancel.
// The error is set as for [Terminal.AskForm].
func (t *Terminal) AskURL(ctx context.Context, server, message, url string, open func(url string) error) (FormAction, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, done, err := t.asker(ctx)
	if err != nil {
		return FormDecline, err
	}
	defer done()
	a.printf("\nbasis: MCP server %s asks you to open a page:\n", display.Escape(server))
	if message != "" {
		a.printf("  %s\n", display.Escape(message))
	}
	a.printf("  %s\n", display.Escape(url))
	yes, err := a.yesNo("  open it? [y/N] ", false)
	if err != nil {
		return FormCancel, a.why(err)
	}
	if !yes {
		return FormDecline, nil
	}
	if open == nil || open(url) != nil {
		a.printf("  open it in your browser, then come back\n")
	}
	return FormAccept, nil
}

// asker opens the terminal for a form, refusing what is no terminal, and
// returns how to let go of it.
func (t *Terminal) asker(ctx context.Context) (*asker, func(), error) {
	tty, closeTTY, err := t.open()
	if err != nil {
		return nil, nil, err
	}
	// Not tty.Fd, which would put the file in blocking mode, where read
	// deadlines (and so cancellation) do not work.
	isTTY := false
	raw, err := tty.SyscallConn()
	if err == nil {
		err = raw.Control(func(fd uintptr) { isTTY = term.IsTerminal(int(fd)) })
	}
	if err != nil || !isTTY {
		closeTTY()
		return nil, nil, errNoTerminal
	}
	a := &asker{ctx: ctx, tty: tty, in: bufio.NewReader(deadlineReader{ctx, tty})}
	return a, closeTTY, nil
}

// asker reads answers at a terminal, a line at a time (the terminal stays
// in its own, line-editing mode).
type asker struct {
	ctx context.Context
	tty io.Writer
	in  *bufio.Reader
}

// printf writes to the terminal, with "\n" as a terminal in its own mode
// wants it.
func (a *asker) printf(format string, args ...any) {
	fmt.Fprintf(a.tty, format, args...)
}

// line reads one line; io.EOF when the person pressed Ctrl-D.
func (a *asker) line() (string, error) {
	s, err := a.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// why is the error for a form that ended without an answer from the
// person: the context's when it ended, none for Ctrl-D.
func (a *asker) why(err error) error {
	if a.ctx.Err() != nil {
		return a.ctx.Err()
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("%w: reading an answer: %w", errNoTerminal, err)
}

// yesNo asks a yes/no question; an empty line is def.
func (a *asker) yesNo(question string, def bool) (bool, error) {
	for {
		a.printf("%s", question)
		s, err := a.line()
		if err != nil {
			return false, err
		}
		if v, ok := parseBool(s); ok {
			return v, nil
		}
		if s == "" {
			return def, nil
		}
	}
}

// askForm shows the form, field by field, and returns the person's
// answer.
func (a *asker) askForm(server, message string, f form) (FormAnswer, error) {
	cancel := func(err error) (FormAnswer, error) {
		a.printf("\n  cancelled\n")
		return FormAnswer{Action: FormCancel}, a.why(err)
	}
	a.printf("\nbasis: MCP server %s asks:\n", display.Escape(server))
	if message != "" {
		a.printf("  %s\n", display.Escape(message))
	}
	a.printf("  (Enter keeps the value in brackets; Ctrl-D cancels)\n")
	content := map[string]any{}
	for _, fd := range f {
		v, err := a.askField(fd)
		if errors.Is(err, errTooManyTries) {
			a.printf("  declined\n")
			return FormAnswer{Action: FormDecline}, nil
		}
		if err != nil {
			return cancel(err)
		}
		if v != nil {
			content[fd.Name] = v
		}
	}
	send, err := a.yesNo(fmt.Sprintf("  send these answers to %s? [Y/n] ", display.Escape(server)), true)
	if err != nil {
		return cancel(err)
	}
	if !send {
		a.printf("  declined\n")
		return FormAnswer{Action: FormDecline}, nil
	}
	return FormAnswer{Action: FormAccept, Content: content}, nil
}

// askField asks one field until its answer fits; nil is no value (an
// optional field left empty).
func (a *asker) askField(fd field) (any, error) {
	label := fd.Name
	if fd.Title != "" {
		label = fd.Title + " (" + fd.Name + ")"
	}
	var notes []string
	if fd.Required {
		notes = append(notes, "required")
	}
	switch {
	case fd.Type == "array":
		notes = append(notes, "any of: "+strings.Join(fd.Choices, ", ")+"; separate with commas")
	case len(fd.Choices) > 0:
		notes = append(notes, "one of: "+strings.Join(fd.Choices, ", "))
	case fd.Type == "boolean":
		notes = append(notes, "yes or no")
	default:
		notes = append(notes, fd.Type)
	}
	if fd.Min != nil {
		notes = append(notes, "at least "+num(*fd.Min))
	}
	if fd.Max != nil {
		notes = append(notes, "at most "+num(*fd.Max))
	}
	prompt := "  " + display.Escape(label) + " (" + display.Escape(strings.Join(notes, "; ")) + ")"
	if fd.Description != "" {
		prompt += "\n    " + display.Escape(fd.Description)
	}
	if fd.Default != nil {
		def, _ := json.Marshal(fd.Default)
		prompt += " [" + display.Escape(string(def)) + "]"
	}
	prompt += ": "
	for range maxTries {
		a.printf("%s", prompt)
		s, err := a.line()
		if err != nil {
			return nil, err
		}
		if s == "" {
			if fd.Default != nil {
				return fd.Default, nil
			}
			if !fd.Required {
				return nil, nil
			}
			a.printf("  a value is required\n")
			continue
		}
		v, err := fd.parse(s)
		if err == nil {
			return v, nil
		}
		a.printf("  %s\n", display.Escape(err.Error()))
	}
	return nil, errTooManyTries
}

// deadlineReader reads f until ctx is done: a call that ends (or a
// signal) must not leave its host waiting at the terminal. A deadline set
// to end a read is taken away again, for the file's next user (a TTY the
// caller keeps open).
type deadlineReader struct {
	ctx context.Context
	f   *os.File
}

func (r deadlineReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(r.ctx, func() {
		defer close(interrupted)
		_ = r.f.SetReadDeadline(time.Unix(1, 0)) // a time in the past
	})
	defer func() {
		if !stop() {
			<-interrupted
			_ = r.f.SetReadDeadline(time.Time{})
		}
	}()
	n, err := r.f.Read(p)
	if r.ctx.Err() != nil && n == 0 {
		return 0, r.ctx.Err()
	}
	return n, err
}
