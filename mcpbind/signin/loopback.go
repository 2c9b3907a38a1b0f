package signin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/subprocess"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Flow is one sign-in's browser half, what mcpbind's ManagerOptions.SignIn
// returns: the Manager runs go-sdk's authorization code flow around it.
type Flow struct {
	// RedirectURL is where the authorization server sends the browser
	// back, such as a loopback http://127.0.0.1:PORT/callback.
	RedirectURL string
	// Fetch sends the operator to the authorization URL and returns what
	// came back to RedirectURL: code, state and iss.
	Fetch auth.AuthorizationCodeFetcher
	// Close, if set, releases what receiving needed; called once the
	// sign-in ends either way.
	Close func()
}

// LoopbackOptions configure [Loopback]; nil is every default.
type LoopbackOptions struct {
	// Open sends the operator's browser to a URL, such as [Browser]'s
	// opener; nil (or an error) means the operator opens it by hand.
	Open func(url string) error
	// Notify tells the operator where the sign-in is: opened says
	// whether Open sent the browser there. Nil writes the URL to
	// os.Stderr when it was not opened.
	Notify func(url string, opened bool)
	// Wait bounds how long the sign-in waits for the browser to come
	// back (0: 10 minutes).
	Wait time.Duration
}

// Loopback returns the browser half of a sign-in to server, the one
// `basis mcp login` runs: it listens on a loopback port for one
// authorization response at /callback, refuses one that does not carry
// the state sent (login CSRF) and any second one, and, when the flow
// fetches, sends the operator to the authorization URL. The port is
// closed by the first response, the wait's end, or Flow.Close.
func Loopback(ctx context.Context, server string, opts *LoopbackOptions) (*Flow, error) {
	var o LoopbackOptions
	if opts != nil {
		o = *opts
	}
	if o.Wait <= 0 {
		o.Wait = 10 * time.Minute
	}
	if o.Notify == nil {
		o.Notify = func(u string, opened bool) {
			if !opened {
				fmt.Fprintf(os.Stderr, "to sign in to %s, open this address in a browser:\n%s\n", server, u)
			}
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiving the sign-in needs a loopback port: %v", err)
	}
	cb := &callback{results: make(chan callbackResult, 1)}
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	closeAll := func() { once.Do(func() { _ = srv.Close() }) }
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("the authorization address is not a URL")
		}
		cb.setState(u.Query().Get("state"))
		opened := o.Open != nil && o.Open(args.URL) == nil
		o.Notify(args.URL, opened)
		ctx, cancel := context.WithTimeout(ctx, o.Wait)
		defer cancel()
		select {
		case r := <-cb.results:
			closeAll() // one use
			return r.res, r.err
		case <-ctx.Done():
			closeAll()
			return nil, fmt.Errorf("no answer came back from the browser within %s", o.Wait)
		}
	}
	return &Flow{RedirectURL: "http://" + ln.Addr().String() + "/callback", Fetch: fetch, Close: closeAll}, nil
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

// Browser returns how environ opens a URL: the first command of $BROWSER
// (a colon-separated list; %s in it stands for the URL), else xdg-open
// where $DISPLAY or $WAYLAND_DISPLAY is set, or macOS's open. It returns
// nil when there is none. The browser runs with environ, its output going
// to stderr (nil: discarded), and is not waited for.
func Browser(environ []string, stderr io.Writer) func(url string) error {
	env := func(n string) string { v, _ := subprocess.LookupEnv(environ, n); return v }
	var argv []string
	if b := env("BROWSER"); b != "" {
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
		cmd.Env = environ
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}
