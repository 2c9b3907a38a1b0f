//go:build unix && !nomcp

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveManifest is the roster basis serve is tested on: tools of the
// two side effects a declared tool can have, one that reports progress,
// one that starts a process tree and waits, and one whose environment
// holds the canary. The MCP servers add tools of side effect none (the
// operator trusts their annotations) and external.
const serveManifest = `{"schema": 1, "tools": {
  "look":   {"description": "Echo the input.", "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false},
             "command": ["/bin/cat"]},
  "deploy": {"description": "Deploy.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/deploy.sh"],
             "env": {"DEPLOY_TOKEN": "${DEPLOY_TOKEN}"}, "side_effect": "external"},
  "steps":  {"description": "Reports progress.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/steps.sh"]},
  "tree":   {"description": "Starts a process tree and waits.", "input_schema": {"type": "object"}, "command": ["./.basis/tools/tree.sh"]}
}}`

// serveRig is a workspace and a config directory for basis serve, with
// the example MCP server configured and trusted.
type serveRig struct {
	ws, config string
	env        []string
	// http serves streamable HTTP on a loopback port instead of stdio.
	http bool
}

// serveToken is the bearer token of the tests' basis serve --http.
const serveToken = "a-test-token-long-enough-1234"

// eachTransport runs test once over stdio and once over HTTP.
func eachTransport(t *testing.T, test func(t *testing.T, overHTTP bool)) {
	for _, overHTTP := range []bool{false, true} {
		name := "stdio"
		if overHTTP {
			name = "http"
		}
		t.Run(name, func(t *testing.T) { test(t, overHTTP) })
	}
}

func newServeRig(t *testing.T) *serveRig {
	t.Helper()
	ws := t.TempDir()
	r := &serveRig{ws: ws, config: filepath.Join(ws, "config")}
	write(t, filepath.Join(ws, ".basis/tools.json"), serveManifest)
	script(t, filepath.Join(ws, ".basis/tools/deploy.sh"), "#!/bin/sh\ncat >/dev/null\necho \"deployed (token ${#DEPLOY_TOKEN} characters long)\"\n")
	script(t, filepath.Join(ws, ".basis/tools/steps.sh"), "#!/bin/sh\ncat >/dev/null\nfor i in 1 2 3; do echo \"step $i\" >&2; sleep 0.1; done\necho done\n")
	script(t, filepath.Join(ws, ".basis/tools/tree.sh"), "#!/bin/sh\nexec </dev/null\nsleep 300 &\n"+treePIDs+"sleep 301\n")
	write(t, filepath.Join(ws, "data/inventory.json"), `{"warehouse": "north", "items": [{"name": "bracket", "count": 35, "bin": "C1"}]}`)
	write(t, filepath.Join(ws, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"stockroom": {"command": %q}}}`, mcpServerBinary))
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"shelf": {"command": %q, "args": ["-inventory", %q], "trust_annotations": true}}}`,
		mcpServerBinary, filepath.Join(ws, "data/inventory.json")))
	r.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + r.config, "DEPLOY_TOKEN=" + canary}
	r.basis(t, 0, "mcp", "trust")
	return r
}

func script(t *testing.T, path, text string) {
	t.Helper()
	write(t, path, text)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// basis runs the binary to its end and returns its stdout.
func (r *serveRig) basis(t *testing.T, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(basisBinary, append([]string{"-C", r.ws}, args...)...)
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("basis %s: exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, err, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// syncBuffer is a buffer a process and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// served is one client of basis serve: the session, the basis process,
// its stderr, every message exchanged and, over HTTP, the URL.
type served struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
	wire   *syncBuffer
	url    string
}

var servingAt = regexp.MustCompile(`serving MCP at (http://\S+/)`)

// serve starts basis serve with args, over stdio or HTTP as the rig
// says, and connects a client to it.
func (r *serveRig) serve(t testing.TB, copts *mcp.ClientOptions, args ...string) *served {
	t.Helper()
	if r.http {
		args = append(args, "--http", "127.0.0.1:0")
	}
	cmd := exec.Command(basisBinary, append([]string{"-C", r.ws, "serve"}, args...)...)
	cmd.Env = append(r.env, "BASIS_SERVE_TOKEN="+serveToken)
	s := &served{cmd: cmd, stderr: &syncBuffer{}, wire: &syncBuffer{}}
	cmd.Stderr = s.stderr
	var transport mcp.Transport = &mcp.CommandTransport{Command: cmd}
	if r.http {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
		waitUntil(20*time.Second, func() bool {
			if m := servingAt.FindStringSubmatch(s.stderr.String()); m != nil {
				s.url = m[1]
			}
			return s.url != ""
		})
		if s.url == "" {
			t.Fatalf("basis serve --http never said where it listens; stderr:\n%s", s.stderr.String())
		}
		// Not wrapped in a LoggingTransport, which would hide from the
		// client the connection's hook that opens the stream server
		// notifications come on: the HTTP client copies the wire instead.
		transport = &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{serveToken, s.wire}}, MaxRetries: -1}
	} else {
		transport = &mcp.LoggingTransport{Transport: transport, Writer: s.wire}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, copts)
	acked := listenAcks(client)
	cs, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, s.stderr.String())
	}
	if copts != nil && copts.ToolListChangedHandler != nil && cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		// From this protocol on, Connect asks for tools/list_changed and
		// returns before basis has subscribed the session: a change made
		// before would never be sent.
		select {
		case <-acked:
		case <-time.After(30 * time.Second): // a bound, not a wait
			t.Fatalf("basis serve never acknowledged subscriptions/listen; stderr:\n%s", s.stderr.String())
		}
	}
	s.cs = cs
	t.Cleanup(func() {
		cs.Close()
		if strings.Contains(s.wire.String(), canary) {
			t.Errorf("a message the client received holds the canary secret")
		}
		if strings.Contains(s.stderr.String(), canary) {
			t.Errorf("basis serve's stderr holds the canary secret")
		}
	})
	return s
}

// call calls a tool and returns its text and whether it is an error.
func (s *served) call(t *testing.T, name string, args any) (string, bool) {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: protocol error %v; stderr:\n%s", name, err, s.stderr.String())
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// hints is what a test compares of a tool's annotations.
type hints struct {
	ReadOnly, Destructive, OpenWorld bool
}

func hintsOf(a *mcp.ToolAnnotations) hints {
	h := hints{ReadOnly: a.ReadOnlyHint}
	if a.DestructiveHint != nil {
		h.Destructive = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		h.OpenWorld = *a.OpenWorldHint
	}
	return h
}

func TestServeListsAndCalls(t *testing.T) { eachTransport(t, testServeListsAndCalls) }

func testServeListsAndCalls(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	s := r.serve(t, nil, "--approve", "allow")
	list, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]hints{}
	for _, tool := range list.Tools {
		got[tool.Name] = hintsOf(tool.Annotations)
	}
	want := map[string]hints{
		"spawn":                         {Destructive: true},
		"look":                          {Destructive: true},
		"deploy":                        {Destructive: true, OpenWorld: true},
		"steps":                         {Destructive: true},
		"tree":                          {Destructive: true},
		"mcp__stockroom__stock_level":   {Destructive: true, OpenWorld: true},
		"mcp__stockroom__reserve_stock": {Destructive: true, OpenWorld: true},
		"mcp__shelf__stock_level":       {ReadOnly: true},
		"mcp__shelf__reserve_stock":     {Destructive: true, OpenWorld: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools and their annotations (-want +got):\n%s", diff)
	}

	tests := []struct {
		name     string
		tool     string
		args     any
		wantText string
		wantErr  bool
	}{
		{"a declared tool", "look", map[string]any{"name": "Ada"}, `{"name":"Ada"}`, false},
		{"spawn", "spawn", map[string]any{"input": "!echo hi from spawn"}, "hi from spawn", false},
		{"a proxied MCP tool", "mcp__stockroom__stock_level", map[string]any{"name": "bracket"}, "bracket: 35 in bin C1, warehouse north", false},
		{"invalid input names the field", "look", map[string]any{"name": 7}, "the input for look does not match its schema: /name: expected string, but got number", true},
		{"an unknown tool", "lok", map[string]any{}, "", true},
		{"a tool that needs the canary", "deploy", map[string]any{}, fmt.Sprintf("deployed (token %d characters long)", len(canary)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := s.call(t, tt.tool, tt.args)
			if isErr != tt.wantErr {
				t.Errorf("isError %v, want %v: %s", isErr, tt.wantErr, text)
			}
			if tt.wantText != "" && text != tt.wantText {
				t.Errorf("text %q, want %q", text, tt.wantText)
			}
			if tt.wantText == "" && !strings.Contains(text, "look") {
				t.Errorf("refusal %q does not name the close match", text)
			}
		})
	}
	// The canary check at cleanup reads the wire log: it must hold what
	// the client received.
	if !strings.Contains(s.wire.String(), "deployed (token") {
		t.Error("the wire log does not hold the results the client received")
	}
	// One log line per call goes to stderr, written as the result goes
	// out.
	waitUntil(5*time.Second, func() bool { return strings.Count(s.stderr.String(), "basis serve: call ") >= len(tests) })
	if n := strings.Count(s.stderr.String(), "basis serve: call "); n != len(tests) {
		t.Errorf("%d call lines on stderr, want %d:\n%s", n, len(tests), s.stderr.String())
	}
}

func TestServeProgressNotifications(t *testing.T) { eachTransport(t, testServeProgressNotifications) }

func testServeProgressNotifications(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	var mu sync.Mutex
	var got []string
	s := r.serve(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, req.Params.Message)
	}}, "--approve", "allow")
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	res, err := s.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	// Notifications may trail the result by a moment.
	waitUntil(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"step 1", "step 2", "step 3"}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// elicitAnswer is a client user who answers every question the same way,
// and counts them.
type elicitAnswer struct {
	mu     sync.Mutex
	asked  int
	result *mcp.ElicitResult
}

func (a *elicitAnswer) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	return a.result, nil
}

func (a *elicitAnswer) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

func TestServeApprovalByElicitation(t *testing.T) { eachTransport(t, testServeApprovalByElicitation) }

func testServeApprovalByElicitation(t *testing.T, overHTTP bool) {
	tests := []struct {
		name    string
		result  *mcp.ElicitResult // nil: the client cannot elicit
		args    []string
		wantErr bool
		want    string // in the text
	}{
		{"allowed once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil, false, "deployed"},
		{"denied", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, nil, true, "tool deploy denied"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, nil, true, "tool deploy denied"},
		{"client cannot elicit", nil, nil, true, "allow it for good with: basis rules add --tool deploy --source "},
		{"--approve deny", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, []string{"--approve", "deny"}, true, "deploy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newServeRig(t)
			r.http = overHTTP
			answer := &elicitAnswer{result: tt.result}
			copts := &mcp.ClientOptions{}
			if tt.result != nil {
				copts.ElicitationHandler = answer.handle
			}
			s := r.serve(t, copts, tt.args...)
			text, isErr := s.call(t, "deploy", map[string]any{})
			if isErr != tt.wantErr || !strings.Contains(text, tt.want) {
				t.Errorf("isError %v, text %q; want isError %v and %q in it", isErr, text, tt.wantErr, tt.want)
			}
			if tt.name == "client cannot elicit" {
				// The advice is a command that works: run it, and the
				// same call runs.
				manifest, _ := filepath.EvalSymlinks(filepath.Join(r.ws, ".basis/tools.json"))
				if !strings.Contains(text, "--source "+manifest+" --allow") {
					t.Errorf("advice %q is not bound to %s", text, manifest)
				}
			}
			// A read-only tool is never asked about.
			before := answer.count()
			if _, isErr := s.call(t, "mcp__shelf__stock_level", map[string]any{"name": "bracket"}); isErr || answer.count() != before {
				t.Errorf("the read-only call was refused (%v) or asked about", isErr)
			}
		})
	}
}

func TestServeAlwaysIsRememberedForTheWorkspace(t *testing.T) {
	eachTransport(t, testServeAlwaysIsRememberedForTheWorkspace)
}

func testServeAlwaysIsRememberedForTheWorkspace(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	answer := &elicitAnswer{result: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_always"}}}
	s := r.serve(t, &mcp.ClientOptions{ElicitationHandler: answer.handle})
	for i := range 2 {
		if text, isErr := s.call(t, "deploy", map[string]any{}); isErr {
			t.Fatalf("call %d refused: %s", i, text)
		}
	}
	if n := answer.count(); n != 1 {
		t.Errorf("asked %d times, want once: the second call is allowed by the remembered answer", n)
	}
	// It is an operator rule bound to this workspace's manifest.
	loaded, err := approver.LoadRules(context.Background(), filepath.Join(r.config, approver.OperatorRulesFile), approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	rules := loaded.Rules
	manifest, _ := filepath.EvalSymlinks(filepath.Join(r.ws, ".basis/tools.json"))
	if len(rules) != 1 || rules[0].Tool != "deploy" || rules[0].Source != manifest || rules[0].Decision != approver.RuleAllow {
		t.Fatalf("saved rules %+v; want one allow for deploy from %s", rules, manifest)
	}
	// It approves deploy as the user was shown it: its definition.
	if !strings.Contains(string(rules[0].Definition), `"program":"`) {
		t.Errorf("the saved rule records no definition of deploy: %s", rules[0].Definition)
	}
	// A fresh serve of the same workspace does not ask; one of another
	// workspace with a tool of the same name does.
	again := r.serve(t, &mcp.ClientOptions{ElicitationHandler: answer.handle})
	if text, isErr := again.call(t, "deploy", map[string]any{}); isErr || answer.count() != 1 {
		t.Errorf("after a restart: isError %v (%s), asked %d times", isErr, text, answer.count())
	}
	other := newServeRig(t)
	other.http = overHTTP
	other.config, other.env = r.config, r.env
	other.basis(t, 0, "mcp", "trust")
	elsewhere := other.serve(t, &mcp.ClientOptions{ElicitationHandler: answer.handle})
	if _, isErr := elsewhere.call(t, "deploy", map[string]any{}); isErr || answer.count() != 2 {
		t.Errorf("another workspace's deploy: isError %v, asked %d times; want it asked", isErr, answer.count())
	}
}

func TestServeClientCancellationKillsTheProcessGroup(t *testing.T) {
	eachTransport(t, testServeClientCancellationKillsTheProcessGroup)
}

func testServeClientCancellationKillsTheProcessGroup(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	s := r.serve(t, nil, "--approve", "allow")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tree", Arguments: map[string]any{}})
		done <- err
	}()
	pids := waitForPIDs(t, filepath.Join(r.ws, "pids"), nil)
	cancel()
	<-done
	requireGone(t, pids)
	// The session goes on.
	if _, isErr := s.call(t, "mcp__shelf__stock_level", map[string]any{"name": "bracket"}); isErr {
		t.Error("the session did not survive the cancellation")
	}
}

// requireGone waits a while for every pid to end.
func requireGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if !waitUntil(10*time.Second, func() bool { return !alive(pid) }) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d of the tool's tree is still running", pid)
		}
	}
}

func TestServeSIGTERMMidCall(t *testing.T) { eachTransport(t, testServeSIGTERMMidCall) }

func testServeSIGTERMMidCall(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	audit := filepath.Join(r.ws, "audit.jsonl")
	s := r.serve(t, nil, "--approve", "allow", "--audit", audit)
	go s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tree", Arguments: map[string]any{}})
	pids := waitForPIDs(t, filepath.Join(r.ws, "pids"), nil)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The client's transport reaps basis only when it closes; until then
	// an exited basis is a zombie, which alive counts as ended.
	if !waitUntil(20*time.Second, func() bool { return !alive(s.cmd.Process.Pid) }) {
		t.Fatalf("basis serve did not exit after SIGTERM; stderr:\n%s", s.stderr.String())
	}
	requireGone(t, pids)
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatalf("no audit record: %v", err)
	}
	recs := auditEvents(t, data)
	if len(recs) != 2 || recs[0].Event != "start" || recs[1].Event != "end" || recs[0].CallID != recs[1].CallID {
		t.Fatalf("audit %q; want the start and the end of one call", data)
	}
	if rec := recs[1]; rec.Tool != "tree" || rec.Outcome == "ok" {
		t.Errorf("audit record %+v; want the cancelled tree call", rec)
	}
}

func TestServeReloadsAnEditedManifest(t *testing.T) {
	eachTransport(t, testServeReloadsAnEditedManifest)
}

func testServeReloadsAnEditedManifest(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	changed := make(chan struct{}, 10)
	s := r.serve(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, "--approve", "allow")
	manifest := filepath.Join(r.ws, ".basis/tools.json")
	write(t, manifest, strings.Replace(serveManifest, `"look":`, `"shout": {"description": "Shout.", "input_schema": {"type": "object"}, "command": ["/bin/echo", "HELLO"]},
  "look":`, 1))
	select {
	case <-changed:
	case <-time.After(15 * time.Second):
		t.Fatalf("no tools/list_changed after the edit; stderr:\n%s", s.stderr.String())
	}
	if text, isErr := s.call(t, "shout", map[string]any{}); isErr || text != "HELLO" {
		t.Errorf("the new tool: isError %v, %q", isErr, text)
	}
	// A broken edit keeps the last good roster and says why on stderr.
	// Counted: a reload that read the first edit half-written said so too.
	const kept = "still serving the tools from before the edit"
	before := strings.Count(s.stderr.String(), kept)
	write(t, manifest, `{"schema": 1, "tools": {"shout": {`)
	if !waitUntil(15*time.Second, func() bool { return strings.Count(s.stderr.String(), kept) != before }) {
		t.Fatalf("the broken edit was not reported; stderr:\n%s", s.stderr.String())
	}
	if text, isErr := s.call(t, "shout", map[string]any{}); isErr {
		t.Errorf("after a broken edit the last good tool is gone: %s", text)
	}
}

// bearer adds the token to every request and copies every response body,
// the SSE streams included, to wire.
// listenAcks returns a channel that receives each
// notifications/subscriptions/acknowledged the client's sessions receive.
func listenAcks(client *mcp.Client) <-chan struct{} {
	acked := make(chan struct{}, 16)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if _, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	return acked
}

type bearer struct {
	token string
	wire  io.Writer
}

type teeBody struct {
	io.Reader
	io.Closer
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && b.wire != nil {
		resp.Body = teeBody{io.TeeReader(resp.Body, b.wire), resp.Body}
	}
	return resp, err
}

func TestServeHTTPNeedsTheToken(t *testing.T) {
	r := newServeRig(t)
	r.http = true
	s := r.serve(t, nil, "--approve", "allow")
	url := s.url
	// Without the token, or with a wrong one: 401, and nothing ran.
	call := `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "spawn", "arguments": {"input": "!touch ran"}}}`
	for _, auth := range []string{"", "Bearer wrong-token-wrong-token"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran")); err == nil {
		t.Error("a request without the right token ran a tool")
	}
	// With it, the call runs.
	if text, isErr := s.call(t, "spawn", map[string]any{"input": "!touch ran"}); isErr {
		t.Fatalf("with the token: %s", text)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran")); err != nil {
		t.Errorf("the call with the token did not run: %v", err)
	}
}

func TestServeRefusesWhatItCannotServeSafely(t *testing.T) {
	r := newServeRig(t)
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"a non-loopback address", []string{"--http", "0.0.0.0:0"}, nil, "pass --allow-remote"},
		{"a host name that is not localhost", []string{"--http", "example.com:8080"}, nil, "pass --allow-remote"},
		{"a short token", []string{"--http", "127.0.0.1:0"}, []string{"BASIS_SERVE_TOKEN=short"}, "shorter than 16 characters"},
		{"a terminal approver", []string{"--approve", "prompt"}, nil, "no terminal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(basisBinary, append([]string{"-C", r.ws, "serve"}, tt.args...)...)
			cmd.Env = append(r.env, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, tt.want)
			}
		})
	}
}

// A proxied server's own tools/list_changed, and an edit of the MCP
// config, both reach the client as tools/list_changed, with the new tools
// callable.
func TestServeFollowsProxiedToolChanges(t *testing.T) {
	eachTransport(t, testServeFollowsProxiedToolChanges)
}

func testServeFollowsProxiedToolChanges(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	changed := make(chan struct{}, 10)
	s := r.serve(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, "--approve", "allow")
	waitChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(15 * time.Second):
			t.Fatalf("no tools/list_changed after %s; stderr:\n%s", what, s.stderr.String())
		}
	}
	// The operator adds a server while basis serves.
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"t": {"command": %q}}}`, mcpTestServerBinary))
	waitChanged("the MCP config was edited")
	if text, isErr := s.call(t, "mcp__t__grow", map[string]any{}); isErr {
		t.Fatalf("grow: %s", text)
	}
	waitChanged("the proxied server's tools changed")
	if text, isErr := s.call(t, "mcp__t__grown", map[string]any{"said": "hi"}); isErr || !strings.Contains(text, "hi") {
		t.Errorf("the grown tool: isError %v, %q", isErr, text)
	}
	// The workspace's server is still served after the reload restarted it.
	if text, isErr := s.call(t, "mcp__stockroom__stock_level", map[string]any{"name": "bracket"}); isErr {
		t.Errorf("the workspace's server after the reload: %s", text)
	}
	// The server removed from the config is gone from the list.
	list, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if strings.HasPrefix(tool.Name, "mcp__shelf__") {
			t.Errorf("%s is still listed after its server left the config", tool.Name)
		}
	}
}

// Trusting the workspace's .mcp.json while basis serves starts its
// servers and serves their tools; nothing of it is served before.
func TestServeStartsAServerOnceTrusted(t *testing.T) {
	eachTransport(t, testServeStartsAServerOnceTrusted)
}

func testServeStartsAServerOnceTrusted(t *testing.T, overHTTP bool) {
	r := newServeRig(t)
	r.http = overHTTP
	r.basis(t, 0, "mcp", "untrust")
	changed := make(chan struct{}, 10)
	s := r.serve(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, "--approve", "allow")
	if text, isErr := s.call(t, "mcp__stockroom__stock_level", map[string]any{"name": "bracket"}); !isErr {
		t.Fatalf("an untrusted server's tool was served: %s", text)
	}
	if !strings.Contains(s.stderr.String(), "MCP server stockroom (.mcp.json): untrusted: run basis mcp trust") {
		t.Errorf("stderr does not say the server is untrusted:\n%s", s.stderr.String())
	}
	r.basis(t, 0, "mcp", "trust")
	select {
	case <-changed:
	case <-time.After(15 * time.Second):
		t.Fatalf("no tools/list_changed after the trust; stderr:\n%s", s.stderr.String())
	}
	if text, isErr := s.call(t, "mcp__stockroom__stock_level", map[string]any{"name": "bracket"}); isErr {
		t.Errorf("after the trust: %s", text)
	}
}

// Two HTTP clients are independent sessions: a call of a tool that is not
// Parallel in one does not wait for such a call in the other. Each call of
// meet arrives, then waits (up to 10 s) for a second arrival; it prints
// how many calls it saw, so two calls held one at a time would each see 1.
func TestServeHTTPClientsDoNotWaitForEachOther(t *testing.T) {
	r := newServeRig(t)
	r.http = true
	write(t, filepath.Join(r.ws, ".basis/tools.json"), `{"schema": 1, "tools": {"meet": {
		"description": "Arrive, and wait for another call to arrive.",
		"input_schema": {"type": "object"},
		"command": ["./.basis/tools/meet.sh"]
	}}}`)
	script(t, filepath.Join(r.ws, ".basis/tools/meet.sh"), `#!/bin/sh
cat >/dev/null
mktemp arrived.XXXXXX >/dev/null
n=0
while [ "$(ls arrived.* | wc -l)" -lt 2 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
ls arrived.* | wc -l | tr -d ' '
`)
	first := r.serve(t, nil, "--approve", "allow")
	second, err := mcp.NewClient(&mcp.Implementation{Name: "second-client", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: first.url, HTTPClient: &http.Client{Transport: bearer{serveToken, &syncBuffer{}}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	texts := make(chan string, 2)
	for _, cs := range []*mcp.ClientSession{first.cs, second} {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "meet", Arguments: map[string]any{}})
			if err != nil {
				texts <- "protocol error: " + err.Error()
				return
			}
			texts <- resultText(res)
		}()
	}
	for range 2 {
		if got := <-texts; got != "2" {
			t.Errorf("a call saw %q arrivals, want 2: the clients' calls were held one at a time\nstderr:\n%s", got, first.stderr.String())
		}
	}
}

// basis serve --http closes the connection of a request without the
// token: a client that cannot authenticate keeps nothing open.
func TestServeHTTPClosesAnUnauthorizedConnection(t *testing.T) {
	r := newServeRig(t)
	r.http = true
	s := r.serve(t, nil)
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", u.Path, u.Host)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("status %d, Connection: close %v; want 401 and close", resp.StatusCode, resp.Close)
	}
	if _, err := io.Copy(io.Discard, br); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("basis serve kept the unauthorized connection open")
	}
}
