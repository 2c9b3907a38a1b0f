//go:build linux

package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServerPkg is go-sdk's conformance server, pinned by go.mod's
// tool line (go-sdk v1.8.0), as cmd/conformance builds it.
const everythingServerPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// gatewayTool is the everything-server's simplest tool: no input, one
// fixed text block back. The call is all protocol, no work.
const (
	gatewayTool = "test_simple_text"
	gatewayText = "This is a simple text response for testing."
)

var (
	everythingOnce sync.Once
	everythingBin  string
	everythingErr  error
)

// everythingServer builds go-sdk's everything-server once, in this module
// so that the tool line pins its version.
func everythingServer(tb testing.TB) string {
	tb.Helper()
	everythingOnce.Do(func() {
		everythingBin = filepath.Join(binDir, "everything-server")
		wd, err := os.Getwd()
		if err != nil {
			everythingErr = err
			return
		}
		everythingErr = goBuild(wd, everythingBin, everythingServerPkg)
	})
	if everythingErr != nil {
		tb.Fatal(everythingErr)
	}
	return everythingBin
}

// gatewayMode is one protocol revision over streamable HTTP, with the
// everything-server's matching HTTP mode, as cmd/conformance runs them.
type gatewayMode struct {
	name      string // the sub-benchmark's name
	version   string // the revision the client asks for
	stateless bool   // everything-server -stateless
}

var gatewayModes = []gatewayMode{
	{name: "stateless", version: "2026-07-28", stateless: true},
	{name: "stateful", version: "2025-11-25", stateless: false},
}

// BenchmarkGatewayOverDirect alternates, call by call, the same tools/call
// of go-sdk's everything-server (test_simple_text) made by a go-sdk client
// over streamable HTTP three ways:
//
//   - direct: to the everything-server's own HTTP transport;
//   - basis: to `basis serve --http` (the built binary, bearer token,
//     --approve allow), whose one MCP server is the everything-server
//     over stdio with "tool_prefix": "", so the tool keeps its name;
//   - relay: to cmd/mcprelay, the smallest go-sdk gateway (no gate, no
//     audit: each call passed on as it is), whose one MCP server is the
//     everything-server over stdio too.
//
// The client side is the same for all three: the same revision and HTTP
// mode (sub-benchmarks stateless, 2026-07-28, and stateful, 2025-11-25
// with a session), the same http.Client sending the same Authorization
// header. basis and the relay make the same two hops, the second one a
// stdio round trip a direct call does not make. It reports the median of
// each, "ratio" (basis over direct: the figure), "relay/direct"
// (what the extra process hop costs any gateway) and "basis/relay" (what
// basis itself costs over that hop). On a loaded machine the latencies
// move with the load; the CPU time each gateway process spends per call
// (its threads' run time, from /proc) moves less: "basis-cpu-µs/op",
// "relay-cpu-µs/op" and their ratio "cpu-basis/relay" (the gateway
// process alone, not the everything-server it starts).
func BenchmarkGatewayOverDirect(b *testing.B) {
	if !serveAvailable(b) {
		b.Skip("the basis built here has no serve command (a -tags nomcp build?)")
	}
	server := everythingServer(b)
	for _, m := range gatewayModes {
		b.Run(m.name, func(b *testing.B) {
			token := newToken(b)
			hc := &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport.(*http.Transport).Clone()}}
			direct := connectHTTP(b, startEverythingHTTP(b, server, m.stateless), hc, m.version)
			basisURL, basisPID := startGateway(b, server, token)
			relayURL, relayPID := startRelay(b, server, m.stateless)
			viaBasis := connectHTTP(b, basisURL, hc, m.version)
			viaRelay := connectHTTP(b, relayURL, hc, m.version)
			params := &mcp.CallToolParams{Name: gatewayTool, Arguments: map[string]any{}}
			call := func(cs *mcp.ClientSession, what string) time.Duration {
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), params)
				d := time.Since(t0)
				if err != nil || res.IsError || toolText(res) != gatewayText {
					b.Fatalf("%s: %s: %v %v", what, gatewayTool, err, res)
				}
				return d
			}
			// One call each first: connections made, code paths warm.
			call(direct, "directly")
			call(viaBasis, "through basis serve")
			call(viaRelay, "through the relay")
			var dd, bd, rd []time.Duration
			basisCPU, relayCPU := cpuTime(b, basisPID), cpuTime(b, relayPID)
			for b.Loop() {
				dd = append(dd, call(direct, "directly"))
				bd = append(bd, call(viaBasis, "through basis serve"))
				rd = append(rd, call(viaRelay, "through the relay"))
			}
			basisCPU, relayCPU = cpuTime(b, basisPID)-basisCPU, cpuTime(b, relayPID)-relayCPU
			md, mb, mr := median(dd), median(bd), median(rd)
			b.ReportMetric(float64(md)/1e3, "direct-µs/op")
			b.ReportMetric(float64(mb)/1e3, "basis-µs/op")
			b.ReportMetric(float64(mr)/1e3, "relay-µs/op")
			b.ReportMetric(float64(mb)/float64(md), "ratio")
			b.ReportMetric(float64(mr)/float64(md), "relay/direct")
			b.ReportMetric(float64(mb)/float64(mr), "basis/relay")
			b.ReportMetric(float64(basisCPU)/1e3/float64(len(bd)), "basis-cpu-µs/op")
			b.ReportMetric(float64(relayCPU)/1e3/float64(len(rd)), "relay-cpu-µs/op")
			b.ReportMetric(float64(basisCPU)/float64(relayCPU), "cpu-basis/relay")
		})
	}
}

// bearerTransport adds the bearer token to every request. Both the direct
// and the basis client send it (the everything-server ignores it), so the
// requests are the same size.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

func newToken(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// connectHTTP connects a go-sdk client to url over streamable HTTP,
// asking for protocol revision version.
func connectHTTP(tb testing.TB, url string, hc *http.Client, version string) *mcp.ClientSession {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "basis-e2e", Version: "v0"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connecting to %s: %v", url, err)
	}
	tb.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		tb.Fatalf("%s speaks %s, not %s: the comparison would not be like with like", url, got, version)
	}
	return cs
}

// startEverythingHTTP starts the everything-server's streamable HTTP
// transport on a free loopback port and returns its endpoint.
func startEverythingHTTP(tb testing.TB, server string, stateless bool) string {
	tb.Helper()
	addr := freeAddr(tb)
	cmd := exec.Command(server, "-http="+addr, "-stateless="+map[bool]string{true: "true", false: "false"}[stateless])
	startListening(tb, cmd, addr, filepath.Join(tb.TempDir(), "everything-server.log"))
	return "http://" + addr + "/mcp"
}

var (
	relayOnce sync.Once
	relayBin  string
	relayErr  error
)

// startRelay starts cmd/mcprelay on a free loopback port in the given
// HTTP mode, with the everything-server as its one stdio MCP server, and
// returns its endpoint and pid.
func startRelay(tb testing.TB, server string, stateless bool) (string, int) {
	tb.Helper()
	relayOnce.Do(func() {
		relayBin = filepath.Join(binDir, "mcprelay")
		wd, err := os.Getwd()
		if err != nil {
			relayErr = err
			return
		}
		relayErr = goBuild(wd, relayBin, "./cmd/mcprelay")
	})
	if relayErr != nil {
		tb.Fatal(relayErr)
	}
	addr := freeAddr(tb)
	cmd := exec.Command(relayBin, "-http="+addr, "-stateless="+strconv.FormatBool(stateless), server)
	pid := startListening(tb, cmd, addr, filepath.Join(tb.TempDir(), "mcprelay.log"))
	return "http://" + addr + "/mcp", pid
}

// startGateway starts `basis serve --http` on a free loopback port with
// the everything-server, copied into a fresh workspace, as its one
// trusted stdio MCP server, serving the server's tools under their own
// names, and returns its endpoint and pid.
func startGateway(tb testing.TB, server, token string) (string, int) {
	tb.Helper()
	ws, cfg := tb.TempDir(), tb.TempDir()
	program, err := os.ReadFile(server)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "bin", "everything-server"), program, 0o755); err != nil {
		tb.Fatal(err)
	}
	writeFilesTB(tb, ws, map[string]string{".mcp.json": `{"mcpServers": {"everything": {"command": "bin/everything-server", "tool_prefix": ""}}}`})
	trust := exec.Command(basisBinary, "-C", ws, "mcp", "trust")
	trust.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
	if out, err := trust.CombinedOutput(); err != nil {
		tb.Fatalf("basis mcp trust: %v\n%s", err, out)
	}
	addr := freeAddr(tb)
	cmd := exec.Command(basisBinary, "-C", ws, "serve", "--http", addr, "--approve", "allow")
	cmd.Env = basisEnv("BASIS_CONFIG_DIR="+cfg, "BASIS_SERVE_TOKEN="+token)
	pid := startListening(tb, cmd, addr, filepath.Join(tb.TempDir(), "basis-serve.log"))
	return "http://" + addr + "/mcp", pid
}

// startListening starts cmd in a process group of its own, its output
// in logPath, waits until addr accepts connections (polling, within a
// minute) and returns its pid. When the benchmark ends it is asked to stop (SIGTERM: basis
// then stops its servers), and its group is killed after that.
func startListening(tb testing.TB, cmd *exec.Cmd, addr, logPath string) int {
	tb.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	logFile.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	logTail := func() string {
		out, _ := os.ReadFile(logPath)
		return tail(string(out), 20)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s is not listening on %s after a minute:\n%s", filepath.Base(cmd.Path), addr, logTail())
		}
		// Poll again shortly, or fail at once if the process exits.
		select {
		case <-exited:
			tb.Fatalf("%s exited before listening on %s:\n%s", filepath.Base(cmd.Path), addr, logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cpuTime is the time the threads of process pid have run on a CPU so
// far, in nanoseconds (the first field of each thread's schedstat).
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	if err != nil || len(tasks) == 0 {
		tb.Fatalf("reading the threads of process %d: %v", pid, err)
	}
	var total time.Duration
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a thread that ended: Go's rarely do
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		total += time.Duration(ns)
	}
	return total
}

// freeAddr returns a loopback host:port nothing listens on now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
