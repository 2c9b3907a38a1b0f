//go:build unix

package terminal_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/contract"
)

func terminalRequest(t *testing.T) approver.Request {
	return approver.Request{
		CallID:  "call_3",
		Tool:    "spawn",
		Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Subject: subject(t, cargoTest), Summary: "run cargo test in /repo"},
	}
}

// TestTerminalWithoutATerminal: nothing to ask at is a denial, and the
// question is printed nowhere — not to the file, not to stdout or stderr.
func TestTerminalWithoutATerminal(t *testing.T) {
	terminals, regular, pipeR, pipeW := nonTerminals(t)
	printed := captureStdoutStderr(t, func() {
		for name, term := range terminals {
			answer, err := term.Approve(context.Background(), terminalRequest(t))
			if err == nil || !strings.HasPrefix(err.Error(), "no terminal to ask at") || answer.Decision != approver.Deny || !strings.Contains(answer.Reason, "no terminal to ask at") {
				t.Errorf("%s: %+v, %v; want a denial saying there is no terminal", name, answer, err)
			}
			g := newGate(t, term)
			v := authorize(t, g, "spawn", cargoTest)
			if v.Allow || v.Source != approver.SourceFailClosed || v.Reason != "tool spawn denied: no answer from the approver: no terminal to ask at; no rule allows the command cargo test" {
				t.Errorf("%s: verdict %+v", name, v)
			}
		}
	})
	if printed != "" {
		t.Errorf("printed with no terminal: %q", printed)
	}
	if data, _ := os.ReadFile(regular); len(data) != 0 {
		t.Errorf("the question was written to a file that is not a terminal: %q", data)
	}
	pipeW.Close()
	if data, _ := io.ReadAll(pipeR); len(data) != 0 {
		t.Errorf("the question was written to a pipe: %q", data)
	}
}

// nonTerminals returns a Terminal for each thing that is not one — a
// missing device, a regular file, a pipe — with the file's path and the
// pipe's ends, for seeing that nothing was written to them.
func nonTerminals(t *testing.T) (terms map[string]*terminal.Terminal, regular string, pipeR, pipeW *os.File) {
	t.Helper()
	regular = filepath.Join(t.TempDir(), "not-a-tty")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipeR.Close(); pipeW.Close() })
	terms = map[string]*terminal.Terminal{
		"missing device": {Path: filepath.Join(t.TempDir(), "no-such-tty")},
		"regular file":   {Path: regular},
		"pipe":           {TTY: pipeW},
	}
	return terms, regular, pipeR, pipeW
}

// captureStdoutStderr runs fn with this process's stdout and stderr going to
// a pipe and returns what was written.
func captureStdoutStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	var got bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&got, r); close(done) }()
	fn()
	os.Stdout, os.Stderr = stdout, stderr
	w.Close()
	<-done
	r.Close()
	return got.String()
}
