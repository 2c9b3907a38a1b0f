//go:build !nomcp

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// At a terminal, a server's form is asked field by field — the server
// named, the default in brackets — and the answers go back; what the
// server wrote cannot move the cursor or clear the screen.
func TestCallAsksAServersFormAtTheTerminal(t *testing.T) {
	tests := []struct {
		name    string
		typed   []string // a line each, typed after the prompt before it shows
		prompts []string
		want    string
	}{{
		name:    "a typed value, sent",
		typed:   []string{"alice\n", "\n"},
		prompts: []string{`["x"]: `, "? [Y/n] "},
		want:    `{"action":"accept","content":{"name":"alice"}}`,
	}, {
		name:    "Enter keeps the default",
		typed:   []string{"\n", "y\n"},
		prompts: []string{`["x"]: `, "? [Y/n] "},
		want:    `{"action":"accept","content":{"name":"x"}}`,
	}, {
		name:    "not sent is a decline",
		typed:   []string{"bob\n", "n\n"},
		prompts: []string{`["x"]: `, "? [Y/n] "},
		want:    `{"action":"decline"}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, config := elicitWorkspace(t)
			tty, master, shown := openPTY(t)
			var stdout, stderr bytes.Buffer
			e := basisEnv(ws, config, &stdout, &stderr)
			e.interactive = func() bool { return true }
			e.tty = tty
			exited := make(chan int, 1)
			go func() {
				exited <- run(context.Background(), []string{"call", "--approve", "allow", "mcp__t__ask", `{"message": "who are you?\u001b[2J"}`}, e)
			}()
			for i, line := range tt.typed {
				seen := waitUntil(30*time.Second, func() bool {
					select {
					case code := <-exited:
						t.Fatalf("basis exited %d before asking; terminal:\n%s\nstderr:\n%s", code, shown(), stderr.String())
					default:
					}
					return strings.Count(shown(), tt.prompts[i]) >= 1
				})
				if !seen {
					t.Fatalf("no %q on the terminal; it shows:\n%q", tt.prompts[i], shown())
				}
				if _, err := master.WriteString(line); err != nil {
					t.Fatal(err)
				}
			}
			code := <-exited
			if code != exitOK || strings.TrimSpace(stdout.String()) != tt.want {
				t.Errorf("exit %d, stdout %q, want %s; stderr:\n%s", code, stdout.String(), tt.want, stderr.String())
			}
			q := shown()
			if !strings.Contains(q, `MCP server t asks:`) || !strings.Contains(q, `who are you?`) {
				t.Errorf("the form does not name the server and show its message:\n%q", q)
			}
			if strings.Contains(q, "\x1b[2J") {
				t.Errorf("the server's escape sequence reached the terminal:\n%q", q)
			}
		})
	}
}
