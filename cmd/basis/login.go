//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/subprocess"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// signInWait bounds how long a sign-in waits for the browser to come back.
const signInWait = 10 * time.Minute

// signInHook returns the ManagerOptions.SignIn of this invocation: the
// browser flow when basis can open a browser ($BROWSER, or the platform
// opener where there is a display), else nil, so that a server asking
// for sign-in fails with "run: basis mcp login NAME". orPrint, for
// `basis mcp login`, prints the address when no browser can be opened.
func (w *workspace) signInHook(orPrint bool) func(context.Context, string) (*mcpbind.SignIn, error) {
	open := w.browser()
	if open == nil && !orPrint {
		return nil
	}
	return func(ctx context.Context, server string) (*mcpbind.SignIn, error) {
		return w.loopbackSignIn(server, open)
	}
}

// browser returns how to open a URL: $BROWSER, else xdg-open (with a
// display) or macOS's open; nil when there is none.
func (w *workspace) browser() func(u string) error {
	env := func(n string) string { v, _ := subprocess.LookupEnv(w.e.environ, n); return v }
	var argv []string
	if b := env("BROWSER"); b != "" {
		// $BROWSER is a colon-separated list of commands; the first is used,
		// with %s standing for the address if it is there.
		first, _, _ := strings.Cut(b, ":")
		argv = strings.Fields(first)
	} else if runtime.GOOS == "darwin" {
		argv = []string{"open"}
	} else if env("DISPLAY") != "" || env("WAYLAND_DISPLAY") != "" {
		argv = []string{"xdg-open"}
	}
	if len(argv) == 0 {
		return nil
	}
	if _, err := exec.LookPath(argv[0]); err != nil && !strings.Contains(argv[0], "/") {
		return nil
	}
	return func(u string) error {
		args := append([]string(nil), argv[1:]...)
		placed := false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i], placed = strings.ReplaceAll(a, "%s", u), true
			}
		}
		if !placed {
			args = append(args, u)
		}
		cmd := exec.Command(argv[0], args...)
		cmd.Env = w.e.environ
		cmd.Stdout, cmd.Stderr = w.e.stderr, w.e.stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}

// loopbackSignIn listens on a loopback port for one authorization
// response and sends the operator to the authorization URL with open
// (nil: prints it).
func (w *workspace) loopbackSignIn(server string, open func(string) error) (*mcpbind.SignIn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiving the sign-in needs a loopback port: %v", err)
	}
	cb := &callback{results: make(chan callbackResult, 1)}
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	closeAll := func() { once.Do(func() { _ = srv.Close() }) }
	redirect := "http://" + ln.Addr().String() + "/callback"
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("the authorization address is not a URL")
		}
		cb.setState(u.Query().Get("state"))
		shown := false
		if open != nil {
			if err := open(args.URL); err == nil {
				shown = true
				fmt.Fprintf(w.e.stderr, "basis: signing in to %s in your browser…\n", server)
			}
		}
		if !shown {
			fmt.Fprintf(w.e.stderr, "basis: to sign in to %s, open this address in a browser:\n%s\n", server, args.URL)
		}
		ctx, cancel := context.WithTimeout(ctx, signInWait)
		defer cancel()
		select {
		case r := <-cb.results:
			closeAll() // one use
			return r.res, r.err
		case <-ctx.Done():
			closeAll()
			return nil, fmt.Errorf("no answer came back from the browser within %s", signInWait)
		}
	}
	return &mcpbind.SignIn{RedirectURL: redirect, Fetch: fetch, Close: closeAll}, nil
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// callback receives one authorization response on /callback.
type callback struct {
	mu      sync.Mutex
	state   string
	used    bool
	results chan callbackResult
}

func (c *callback) setState(s string) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
}

func (c *callback) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(rw, r)
		return
	}
	c.mu.Lock()
	state, used := c.state, c.used
	c.used = true
	c.mu.Unlock()
	if used {
		http.Error(rw, "this sign-in was already answered", http.StatusGone)
		return
	}
	q := r.URL.Query()
	var res callbackResult
	switch {
	case state == "" || q.Get("state") != state:
		// Not the response to our request: another page sent the
		// browser here (login CSRF), or an old one came late.
		res.err = errors.New("the authorization response does not carry the state basis sent, so it is refused; sign in again")
	case q.Get("error") != "":
		res.err = fmt.Errorf("the authorization server refused the sign-in (%s)", printableWord(q.Get("error")))
	case q.Get("code") == "":
		res.err = errors.New("the authorization response carries no code; sign in again")
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	if res.err != nil {
		http.Error(rw, "basis: "+res.err.Error(), http.StatusBadRequest)
	} else {
		fmt.Fprintln(rw, "basis: signed in; you may close this window.")
	}
	c.results <- res
}

// printableWord is an OAuth error code fit for a message: letters, digits
// and _ only, else a placeholder.
func printableWord(s string) string {
	if len(s) > 64 || strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return "an error code not shown"
	}
	return s
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
	m := w.openMCP(ctx, &mcpbind.ManagerOptions{SignIn: func(context.Context, string) (*mcpbind.SignIn, error) {
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
