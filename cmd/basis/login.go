//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/signin"
)

// signInHook returns the ManagerOptions.SignIn of this invocation: the
// loopback browser flow when basis can open a browser ($BROWSER, or the
// platform opener where there is a display), else nil, so that a server
// asking for sign-in fails with "run: basis mcp login NAME". orPrint, for
// `basis mcp login`, prints the address when no browser can be opened.
func (w *workspace) signInHook(orPrint bool) func(context.Context, string) (*signin.Flow, error) {
	open := signin.Browser(w.e.environ, w.e.stderr)
	if open == nil && !orPrint {
		return nil
	}
	return func(ctx context.Context, server string) (*signin.Flow, error) {
		return signin.Loopback(ctx, server, &signin.LoopbackOptions{Open: open, Notify: func(u string, opened bool) {
			if opened {
				fmt.Fprintf(w.e.stderr, "basis: signing in to %s in your browser…\n", server)
				return
			}
			fmt.Fprintf(w.e.stderr, "basis: to sign in to %s, open this address in a browser:\n%s\n", server, u)
		}})
	}
}

// signInLine is the one line a command prints when err says a server
// needs sign-in that basis could not run: "run: basis mcp login NAME".
func signInLine(err error) (string, bool) {
	var sie *mcpbind.SignInError
	if errors.As(err, &sie) {
		return sie.Error(), true
	}
	return "", false
}

// mcpLogin signs in to server name afresh.
func (w *workspace) mcpLogin(ctx context.Context, name string) int {
	e := w.e
	m := w.openMCP(ctx, &mcpbind.ManagerOptions{SignIn: w.signInHook(true)})
	defer m.Close()
	asked, err := m.Login(ctx, name)
	if err != nil {
		fmt.Fprintf(e.stderr, "basis: mcp login: %v\n", err)
		return exitFailed
	}
	if !asked {
		fmt.Fprintf(e.stdout, "%s did not ask to sign in: it needs none\n", name)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "signed in to %s\n", name)
	return exitOK
}

// mcpLogout forgets server name's sign-in.
func (w *workspace) mcpLogout(ctx context.Context, name string) int {
	e := w.e
	m := w.openMCP(ctx, nil)
	defer m.Close()
	if err := m.Logout(ctx, name); err != nil {
		fmt.Fprintf(e.stderr, "basis: mcp logout: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "signed out of %s: its tokens are forgotten\n", name)
	return exitOK
}

// mcpSignIns prints each remote server's sign-in state, when there is a
// remote server.
func (w *workspace) mcpSignIns(ctx context.Context) {
	m := w.openMCP(ctx, &mcpbind.ManagerOptions{SignIn: func(context.Context, string) (*signin.Flow, error) {
		return nil, errors.New("listing signs in to nothing")
	}})
	defer m.Close()
	var rows []string
	for _, s := range m.Config().Servers {
		if s.Type == mcpbind.TypeStdio {
			continue
		}
		state, err := m.SignInState(ctx, s.Name)
		if err != nil {
			rows = append(rows, fmt.Sprintf("%s\tunknown: %v", s.Name, err))
			continue
		}
		rows = append(rows, fmt.Sprintf("%s\t%s", s.Name, state))
	}
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSERVER\tSIGN-IN")
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	_ = tw.Flush()
}
