//go:build unix

package terminal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/contract"
)

// With no terminal to ask at (here a regular file stands in for one), the
// approver prints nothing and denies, saying why.
func ExampleTerminal() {
	dir, _ := os.MkdirTemp("", "terminal-example")
	defer os.RemoveAll(dir)
	notATTY := filepath.Join(dir, "not-a-tty")
	os.WriteFile(notATTY, nil, 0o600)

	t := &terminal.Terminal{Path: notATTY}
	answer, err := t.Approve(context.Background(), approver.Request{
		Tool:    "deploy",
		Preview: contract.Preview{SideEffect: contract.SideEffectExternal, Summary: "run ./deploy.sh"},
	})
	fmt.Println(answer.Decision, errors.Is(err, approver.ErrNoTerminal))
	// Output: deny true
}
