package mcpserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// canary is a secret the fake roster holds where a careless server would
// leak it: in a panic value and in an error it keeps but never returns.
const canary = "CANARY-7f3a9c-do-not-leak"

// fakeRoster stands for the runtime. Its consequential tools play the
// gate: they ask through mcpserve.Ask and deny when nobody answers yes.
type fakeRoster struct {
	mu     sync.Mutex
	tools  []contract.Descriptor
	titles map[string]string
	env    map[string]string // holds the canary, as a declared tool's env would

	calls    atomic.Int32
	replies  chan mcpserve.Reply // what Ask returned, for tests that look
	askErrs  chan error          // what Ask failed with
	started  chan string         // a slow call has begun
	ended    chan error          // a slow call's context error when it ended
	inFlight atomic.Int32
	maxIn    atomic.Int32
	lastErr  error             // a careless server might print this; it wraps the canary
	clients  []mcpserve.Client // mcpserve.ClientOf of each call, in order
	ids      []string          // the call id of each call, in order
}

func newFakeRoster() *fakeRoster {
	return &fakeRoster{
		tools: []contract.Descriptor{
			{Name: "read_file", Description: "Reads a file.", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "edit", Description: "Edits a file.", SideEffect: contract.SideEffectLocalState, InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "run_tests", Description: "Runs the tests.", SideEffect: contract.SideEffectProcess, InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "deploy", Description: "Deploys the site.", SideEffect: contract.SideEffectExternal, Source: "/repo/.basis/tools.json", InputSchema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)},
			{Name: "echo", Description: "Says the input back.", SideEffect: contract.SideEffectNone, Parallel: true, InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
			{Name: "fail", Description: "Always fails.", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "slow", Description: "Waits until cancelled.", SideEffect: contract.SideEffectNone, Parallel: true, InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "leaky", Description: "Panics with a secret.", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		titles:  map[string]string{"deploy": "Deploy the site"},
		env:     map[string]string{"DEPLOY_TOKEN": canary},
		replies: make(chan mcpserve.Reply, 16),
		askErrs: make(chan error, 16),
		started: make(chan string, 16),
		ended:   make(chan error, 16),
	}
}

func (f *fakeRoster) Tools() []contract.Descriptor {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tools)
}

func (f *fakeRoster) Title(name string) string { return f.titles[name] }

func (f *fakeRoster) add(d contract.Descriptor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = append(f.tools, d)
}

func (f *fakeRoster) descriptor(name string) (contract.Descriptor, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.tools {
		if d.Name == name {
			return d, true
		}
	}
	return contract.Descriptor{}, false
}

func (f *fakeRoster) Call(ctx context.Context, name string, call contract.Call) (string, bool) {
	f.calls.Add(1)
	f.mu.Lock()
	c, _ := mcpserve.ClientOf(ctx)
	f.clients = append(f.clients, c)
	f.ids = append(f.ids, call.ID)
	f.mu.Unlock()
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	d, ok := f.descriptor(name)
	if !ok {
		return fmt.Sprintf("unknown tool %s; the tools are read_file, edit, run_tests, deploy, echo", name), true
	}
	var in map[string]any
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return "invalid input: not a JSON object", true
	}
	if d.SideEffect.Consequential() {
		if _, ok := in["env"].(string); name == "deploy" && !ok {
			return "invalid input: /env: missing property", true
		}
		reply, err := mcpserve.Ask(ctx, mcpserve.Question{Tool: name, Source: d.Source, SideEffect: d.SideEffect, Summary: "deploy to " + fmt.Sprint(in["env"]), Subject: call.Input})
		if err != nil {
			f.askErrs <- err
			f.mu.Lock()
			f.lastErr = fmt.Errorf("deploy with token %s: %w", f.env["DEPLOY_TOKEN"], err)
			f.mu.Unlock()
			if errors.Is(err, mcpserve.ErrNoElicitation) {
				return name + " was not run: the MCP client cannot ask its user; allow it with: basis rules add --tool " + name + " --allow", true
			}
			return name + " was not run: nobody answered", true
		}
		f.replies <- reply
		if reply.Choice == mcpserve.ChoiceDeny {
			return name + " denied: " + reply.Said, true
		}
		return name + " done (" + string(reply.Choice) + ")", false
	}
	switch name {
	case "echo":
		return fmt.Sprint(in["text"]), false
	case "tracecontext":
		tc, ok := contract.TraceContextOf(ctx)
		return fmt.Sprintf("%v %s %s", ok, tc.Parent, tc.State), false
	case "fail":
		return "exit status 1: the tests failed", true
	case "slow":
		for i := range 3 {
			contract.Progress(ctx, fmt.Sprintf("step %d", i+1))
		}
		f.started <- name
		<-ctx.Done()
		f.ended <- ctx.Err()
		return "stopped: " + ctx.Err().Error(), true
	case "leaky":
		panic(fmt.Errorf("token %s", f.env["DEPLOY_TOKEN"]))
	}
	return "read " + fmt.Sprint(in["path"]), false
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a
// server's log and a logging transport.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lineHandler writes each record's message as a line, as a CLI does.
type lineHandler struct{ w io.Writer }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lineHandler) WithGroup(string) slog.Handler            { return h }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	_, err := io.WriteString(h.w, r.Message+"\n")
	return err
}

type harness struct {
	roster *fakeRoster
	server *mcpserve.Server
	log    *lockedBuffer
}

func newHarness(t testing.TB, opts *mcpserve.ServerOptions) *harness {
	t.Helper()
	h := &harness{roster: newFakeRoster(), log: &lockedBuffer{}}
	if opts == nil {
		opts = &mcpserve.ServerOptions{}
	}
	opts.Logger = slog.New(lineHandler{h.log})
	h.server = mcpserve.NewServer(h.roster, opts)
	return h
}

// connect serves one in-memory client; wire, when set, receives every
// message exchanged.
func (h *harness) connect(t testing.TB, copts *mcp.ClientOptions, version string, wire io.Writer) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.server.Serve(ctx, st) }()
	var tr mcp.Transport = ct
	if wire != nil {
		tr = &mcp.LoggingTransport{Transport: ct, Writer: wire}
	}
	cs, err := connectListening(ctx, mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, copts), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-served
	})
	return cs
}

func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "")
}

func ptr[T any](v T) *T { return &v }

func TestServeListsToolsWithAnnotations(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, nil, "", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type listed struct {
		Title       string
		Description string
		Schema      string
		Annotations mcp.ToolAnnotations
	}
	got := map[string]listed{}
	for _, tool := range res.Tools {
		schema, _ := json.Marshal(tool.InputSchema)
		got[tool.Name] = listed{Title: tool.Title, Description: tool.Description, Schema: string(schema), Annotations: *tool.Annotations}
	}
	tests := []struct {
		name string
		want listed
	}{
		{"read_file", listed{Description: "Reads a file.", Schema: `{"properties":{"path":{"type":"string"}},"type":"object"}`,
			Annotations: mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}},
		{"edit", listed{Description: "Edits a file.", Schema: `{"type":"object"}`,
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}},
		{"run_tests", listed{Description: "Runs the tests.", Schema: `{"type":"object"}`,
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}}},
		{"deploy", listed{Title: "Deploy the site", Description: "Deploys the site.", Schema: `{"properties":{"env":{"type":"string"}},"required":["env"],"type":"object"}`,
			Annotations: mcp.ToolAnnotations{Title: "Deploy the site", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, got[tt.name]); diff != "" {
				t.Errorf("listed tool (-want +got):\n%s", diff)
			}
		})
	}
	if len(res.Tools) != len(h.roster.Tools()) {
		t.Errorf("listed %d tools, the roster has %d", len(res.Tools), len(h.roster.Tools()))
	}
}

func TestServeCallResults(t *testing.T) {
	h := newHarness(t, nil)
	// No elicitation handler: this client cannot be asked.
	cs := h.connect(t, nil, "", nil)
	tests := []struct {
		name      string
		tool      string
		args      any
		wantText  string
		wantError bool
	}{
		{"ok", "echo", map[string]any{"text": "hello"}, "hello", false},
		{"no arguments", "read_file", nil, "read <nil>", false},
		{"tool error", "fail", map[string]any{}, "exit status 1: the tests failed", true},
		{"unknown tool", "nosuch", map[string]any{}, "unknown tool nosuch; the tools are read_file, edit, run_tests, deploy, echo", true},
		{"invalid input", "deploy", map[string]any{"env": 3}, "invalid input: /env: missing property", true},
		{"refused, client cannot ask", "deploy", map[string]any{"env": "prod"}, "deploy was not run: the MCP client cannot ask its user; allow it with: basis rules add --tool deploy --allow", true},
		{"panic", "leaky", map[string]any{}, "basis: the call failed inside the server (a panic); nothing ran to completion, and the server is still up", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("CallTool: protocol error %v; every outcome must be a tool result", err)
			}
			got := struct {
				Text    string
				IsError bool
			}{textOf(t, res), res.IsError}
			want := struct {
				Text    string
				IsError bool
			}{tt.wantText, tt.wantError}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	if err := <-h.roster.askErrs; !errors.Is(err, mcpserve.ErrNoElicitation) {
		t.Errorf("Ask error = %v, want ErrNoElicitation", err)
	}
}

func TestServeLogsOneLinePerCall(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, nil, "", nil)
	for _, name := range []string{"echo", "fail", "nosuch\x1b[2J"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	// The pipeline logs as it ends, which may be just after the result.
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(h.log.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(h.log.String()), "\n")
	var got []string
	for _, l := range lines {
		// Drop the duration, which varies.
		got = append(got, l[:strings.LastIndex(l, " in ")])
	}
	slices.Sort(got)
	want := []string{
		`call 1 echo: ok`,
		`call 2 fail: error`,
		`call 3 "nosuch\x1b[2J": error`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

func TestServeProgressNotifications(t *testing.T) {
	h := newHarness(t, nil)
	var mu sync.Mutex
	var got []string
	three := make(chan struct{})
	cs := h.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%v %v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Message))
		if len(got) == 3 {
			close(three)
		}
	}}, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "slow"}
	params.SetProgressToken("tok-1")
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs.CallTool(ctx, params)
	}()
	select {
	case <-three:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notifications")
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"tok-1 1 step 1", "tok-1 2 step 2", "tok-1 3 step 3"}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestServeNoProgressWithoutToken(t *testing.T) {
	h := newHarness(t, nil)
	var n atomic.Int32
	cs := h.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { n.Add(1) }}, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
	}()
	<-h.roster.started
	cancel()
	<-done
	if got := n.Load(); got != 0 {
		t.Errorf("%d progress notifications without a progress token, want 0", got)
	}
}

func TestServeClientCancellationCancelsTheCall(t *testing.T) {
	h := newHarness(t, nil)
	cancelSlowCall(t, h, h.connect(t, nil, "", nil))
}

// cancelSlowCall starts the roster's slow tool from cs, cancels the call
// once it runs, and checks that the call's context ends cancelled.
func cancelSlowCall(t *testing.T, h *harness, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
	}()
	<-h.roster.started
	cancel()
	select {
	case err := <-h.roster.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the call's context ended with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call's context was not cancelled")
	}
	<-done
}

func TestServeSlowCallDoesNotBlockListOrOtherCalls(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, nil, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}) })
	}
	<-h.roster.started
	<-h.roster.started
	if got := h.roster.maxIn.Load(); got < 2 {
		t.Errorf("at most %d calls ran at once, want 2", got)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("tools/list during slow calls: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || textOf(t, res) != "still here" {
		t.Errorf("a call during slow calls: %v %v", res, err)
	}
	cancel()
	wg.Wait()
}

func TestServeElicitation(t *testing.T) {
	versions := []string{"", "2025-11-25", "2025-06-18"} // "" is the newest, 2026-07-28
	tests := []struct {
		name      string
		result    *mcp.ElicitResult
		wantReply mcpserve.Reply
		wantText  string
		wantError bool
	}{
		{"allow once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}},
			mcpserve.Reply{Choice: mcpserve.ChoiceAllowOnce, Said: "the user allowed it once"}, "deploy done (allow_once)", false},
		{"allow always", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_always"}},
			mcpserve.Reply{Choice: mcpserve.ChoiceAllowAlways, Said: "the user allowed it always"}, "deploy done (allow_always)", false},
		{"deny", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}},
			mcpserve.Reply{Choice: mcpserve.ChoiceDeny, Said: "the user chose deny"}, "deploy denied: the user chose deny", true},
		{"declined", &mcp.ElicitResult{Action: "decline"},
			mcpserve.Reply{Choice: mcpserve.ChoiceDeny, Said: "the user declined the question"}, "deploy denied: the user declined the question", true},
		{"cancelled", &mcp.ElicitResult{Action: "cancel"},
			mcpserve.Reply{Choice: mcpserve.ChoiceDeny, Said: "the user dismissed the question without choosing"}, "deploy denied: the user dismissed the question without choosing", true},
	}
	for _, version := range versions {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%s", versionName(version), tt.name), func(t *testing.T) {
				h := newHarness(t, nil)
				var asked []string
				var mu sync.Mutex
				wire := &lockedBuffer{}
				cs := h.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return tt.result, nil
				}}, version, wire)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if got := textOf(t, res); got != tt.wantText || res.IsError != tt.wantError {
					t.Errorf("result %q (isError %v), want %q (isError %v)", got, res.IsError, tt.wantText, tt.wantError)
				}
				if diff := cmp.Diff(tt.wantReply, <-h.roster.replies); diff != "" {
					t.Errorf("reply (-want +got):\n%s", diff)
				}
				wantAsked := []string{"basis: the tool deploy wants to act (side effect: external).\ndeploy to prod\nExactly what runs: {\"env\":\"prod\"}\nThe tool comes from: /repo/.basis/tools.json\nAllow it?"}
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(wantAsked, asked); diff != "" {
					t.Errorf("questions (-want +got):\n%s", diff)
				}
				// The question travels as an input request on the new
				// protocol and as elicitation/create on older ones.
				viaInputRequest := strings.Contains(wire.String(), `"inputRequests"`)
				viaElicit := slices.ContainsFunc(strings.Split(wire.String(), "\n"), func(l string) bool {
					return strings.Contains(l, `"method":"elicitation/create"`) && !strings.Contains(l, `"inputRequests"`)
				})
				if want := version == ""; viaInputRequest != want || viaElicit == want {
					t.Errorf("input request on the wire: %v, elicitation/create: %v; want %v, %v", viaInputRequest, viaElicit, want, !want)
				}
			})
		}
	}
}

// TestServeElicitationFormIsEscaped: text the model put in a call (here
// the preview's summary and subject) reaches the client's form escaped:
// no bidirectional control, invisible character or escape sequence.
func TestServeElicitationFormIsEscaped(t *testing.T) {
	hostile := []string{"\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200e", "\u200f", "\ufeff", "\x1b[2K\x1b[1A"}
	h := newHarness(t, nil)
	asked := make(chan string, len(hostile))
	cs := h.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, "", nil)
	for _, env := range hostile {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod" + env}}); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		msg := <-asked
		for _, line := range strings.Split(msg, "\n") {
			for _, r := range line {
				if !display.Shown(r) {
					t.Errorf("%q: the form holds %U:\n%s", env, r, msg)
				}
			}
		}
		if want := "deploy to prod" + display.Escape(env) + "\n"; !strings.Contains(msg, want) {
			t.Errorf("%q: the form lacks %q:\n%s", env, want, msg)
		}
	}
}

func TestServeElicitationUnsupportedClient(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run(versionName(version), func(t *testing.T) {
			h := newHarness(t, nil)
			cs := h.connect(t, nil, version, nil)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError || !strings.Contains(textOf(t, res), "basis rules add --tool deploy --allow") {
				t.Errorf("result %q (isError %v), want a denial saying how to allow it", textOf(t, res), res.IsError)
			}
			if err := <-h.roster.askErrs; !errors.Is(err, mcpserve.ErrNoElicitation) {
				t.Errorf("Ask error %v, want ErrNoElicitation", err)
			}
		})
	}
}

// TestServeRetryIsBoundToTheCall plays a client that handles input
// requests itself, the way an attacker would: a made-up request state, or
// the right one with other arguments, must not resume the waiting call.
func TestServeRetryIsBoundToTheCall(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}, "", nil)
	ctx := context.Background()
	args := map[string]any{"env": "prod"}
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("first round: NeedsInput %v, state %q; want an input request", first.NeedsInput(), first.RequestState)
	}
	allow := mcp.InputResponseMap{"basis_approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}}
	// A state basis did not issue for the open question is a protocol
	// error (SEP-2322: a state that fails its check is refused), and so is
	// a genuine state with another call's tool or arguments.
	const badState = "basis: the requestState of this retry names no question basis has open (it was answered already, timed out, was cancelled, or the state was altered); call the tool again without requestState"
	const otherCall = "basis: this retry's client, tool or arguments differ from the call its requestState belongs to; nothing was run. Call the tool again without requestState"
	callID, _, _ := strings.Cut(first.RequestState, ".")
	tests := []struct {
		name     string
		params   *mcp.CallToolParams
		wantText string // a tool error's text, or else
		wantErr  string // a JSON-RPC error's message (invalid params)
	}{
		{"made-up state", &mcp.CallToolParams{Name: "deploy", Arguments: args, InputResponses: allow, RequestState: "AAAAAAAAAAAAAAAAAAAAAAAAAA"}, "", badState},
		{"tampered state", &mcp.CallToolParams{Name: "deploy", Arguments: args, InputResponses: allow, RequestState: first.RequestState + "-TAMPERED"}, "", badState},
		{"the call's id without its round", &mcp.CallToolParams{Name: "deploy", Arguments: args, InputResponses: allow, RequestState: callID}, "", badState},
		{"the call's id with another round", &mcp.CallToolParams{Name: "deploy", Arguments: args, InputResponses: allow, RequestState: callID + ".AAAAAAAAAAAAAAAAAAAAAAAAAA"}, "", badState},
		{"other arguments", &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "staging"}, InputResponses: allow, RequestState: first.RequestState}, "", otherCall},
		{"other tool", &mcp.CallToolParams{Name: "run_tests", Arguments: args, InputResponses: allow, RequestState: first.RequestState}, "", otherCall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, tt.params)
			if tt.wantErr != "" {
				var wire *jsonrpc.Error
				if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != tt.wantErr {
					t.Fatalf("CallTool = %v, %v; want JSON-RPC error %d %q", res, err, jsonrpc.CodeInvalidParams, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != tt.wantText || !res.IsError {
				t.Errorf("result %q (isError %v), want %q (isError true)", got, res.IsError, tt.wantText)
			}
		})
	}
	select {
	case r := <-h.roster.replies:
		t.Fatalf("the waiting call was answered (%v) by a retry that does not match it", r)
	default:
	}
	// The genuine retry, with its arguments in another key order, goes through.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: json.RawMessage(`{ "env" : "prod" }`), InputResponses: allow, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "deploy done (allow_once)" || res.IsError {
		t.Errorf("genuine retry: %q (isError %v)", got, res.IsError)
	}
	// The same answer cannot be replayed.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: args, InputResponses: allow, RequestState: first.RequestState})
	if wire := (*jsonrpc.Error)(nil); !errors.As(err, &wire) {
		t.Errorf("a replayed answer: %v, %v; want a JSON-RPC error", res, err)
	}
	if got := h.roster.calls.Load(); got != 1 {
		t.Errorf("the roster was called %d times, want 1", got)
	}
}

func TestServeUnansweredQuestionDenies(t *testing.T) {
	h := newHarness(t, &mcpserve.ServerOptions{AnswerTimeout: 50 * time.Millisecond})
	cs := h.connect(t, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}, "", nil)
	first, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first round: %v, NeedsInput %v", err, first.NeedsInput())
	}
	// The client never comes back.
	select {
	case err := <-h.roster.askErrs:
		if err == nil || !strings.Contains(err.Error(), "gave no answer") {
			t.Errorf("Ask error %v, want no answer", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the unanswered question never ended")
	}
}

func TestAskOutsideAServedCall(t *testing.T) {
	_, err := mcpserve.Ask(context.Background(), mcpserve.Question{Tool: "deploy"})
	if !errors.Is(err, mcpserve.ErrNotServing) {
		t.Errorf("Ask = %v, want ErrNotServing", err)
	}
}

func TestServeListChanged(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run(versionName(version), func(t *testing.T) {
			h := newHarness(t, nil)
			changed := make(chan struct{}, 4)
			cs := h.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, version, nil)
			// Nothing changed: no notification.
			h.server.Refresh()
			h.roster.add(contract.Descriptor{Name: "lint", Description: "Lints.", SideEffect: contract.SideEffectNone, InputSchema: json.RawMessage(`{"type":"object"}`)})
			h.server.Refresh()
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no tools/list_changed after the roster changed")
			}
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "lint" }) {
				t.Errorf("the new tool is not listed")
			}
			call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lint"})
			if err != nil || call.IsError {
				t.Errorf("calling the new tool: %v %v", err, call)
			}
		})
	}
}

func TestServeRefreshSkipsToolsItCannotServe(t *testing.T) {
	h := newHarness(t, nil)
	h.roster.add(contract.Descriptor{Name: "broken", InputSchema: json.RawMessage(`{"type":"array"}`)})
	h.server.Refresh()
	cs := h.connect(t, nil, "", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "broken" }) {
		t.Errorf("a tool whose schema is not an object schema was listed")
	}
	if want := `tool broken is not served: its input schema is not a JSON Schema object of type "object"`; !strings.Contains(h.log.String(), want) {
		t.Errorf("log %q does not say %q", h.log.String(), want)
	}
}

// TestServeCanaryNeverSent calls every tool, the panicking one and the
// denied one among them, and checks that the secret the roster holds
// never reaches the client or the log.
func TestServeCanaryNeverSent(t *testing.T) {
	h := newHarness(t, nil)
	wire := &lockedBuffer{}
	cs := h.connect(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, "2025-11-25", wire)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range h.roster.Tools() {
		if d.Name == "slow" {
			continue
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: d.Name, Arguments: map[string]any{"env": "prod"}}); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
	}
	if !strings.Contains(wire.String(), "leaky") {
		t.Fatal("the wire log caught nothing; the test would prove nothing")
	}
	for what, text := range map[string]string{"the messages exchanged": wire.String(), "the server's log": h.log.String()} {
		if strings.Contains(text, canary) {
			t.Errorf("the canary secret appears in %s", what)
		}
	}
}

func versionName(v string) string {
	if v == "" {
		return "2026-07-28"
	}
	return v
}

// TestServeEndsCallsWhenItEnds serves over pipes, as stdio does: the
// client going away (its end of the input closed) and the server being
// stopped (a signal) both cancel the call in flight, and Serve returns only
// after the call's pipeline has ended.
func TestServeEndsCallsWhenItEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(clientOut io.Closer, stopServe context.CancelFunc)
	}{
		{"client goes away", func(clientOut io.Closer, _ context.CancelFunc) { clientOut.Close() }},
		{"server stopped", func(_ io.Closer, stopServe context.CancelFunc) { stopServe() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			toServerR, toServerW := io.Pipe()
			toClientR, toClientW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() {
				served <- h.server.Serve(ctx, &mcp.IOTransport{Reader: toServerR, Writer: toClientW})
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: toClientR, Writer: toServerW}, nil)
			if err != nil {
				t.Fatal(err)
			}
			callCtx, stopCall := context.WithCancel(context.Background())
			defer stopCall()
			go cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow"})
			<-h.roster.started
			tt.end(toServerW, cancel)
			select {
			case <-served:
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return")
			}
			// Serve returned only after the call's pipeline ended.
			if n := h.roster.inFlight.Load(); n != 0 {
				t.Errorf("%d calls still running after Serve returned", n)
			}
			select {
			case err := <-h.roster.ended:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the call ended with %v, want context.Canceled", err)
				}
			default:
				t.Error("the call was not cancelled")
			}
			stopCall()
			toClientW.Close()
			cs.Close()
		})
	}
}

// ClientOf tells a roster which client a call came from: the same value
// for one client's calls, another for another client's, nil outside.
func TestServeClientOf(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t, nil, "", nil)
	b := h.connect(t, nil, "", nil)
	for _, cs := range []*mcp.ClientSession{a, a, b} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	h.roster.mu.Lock()
	clients := slices.Clone(h.roster.clients)
	h.roster.mu.Unlock()
	if len(clients) != 3 || clients[0] == (mcpserve.Client{}) || clients[0] != clients[1] || clients[1] == clients[2] {
		t.Errorf("ClientOf for a, a, b = %v; want one value for a's calls and another for b's", clients)
	}
	if c, ok := mcpserve.ClientOf(context.Background()); ok || c != (mcpserve.Client{}) {
		t.Error("ClientOf outside a served call names a client")
	}
}

// Call ids are unique across runs of the server too: an audit log two
// runs wrote to pairs each start record with its own end.
func TestCallIDsAreUniqueAcrossServers(t *testing.T) {
	shape := regexp.MustCompile(`^mcp-[a-z2-7]{8}-[0-9]+$`)
	seen := map[string]bool{}
	for range 2 {
		h := newHarness(t, nil)
		cs := h.connect(t, nil, "", nil)
		for range 2 {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
		}
		h.roster.mu.Lock()
		ids := slices.Clone(h.roster.ids)
		h.roster.mu.Unlock()
		for _, id := range ids {
			if !shape.MatchString(id) || seen[id] {
				t.Errorf("call id %q: want mcp-, the run's 8 characters and a number, never seen before", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d call ids, want 4", len(seen))
	}
}
