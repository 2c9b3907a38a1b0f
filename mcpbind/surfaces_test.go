//go:build unix

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28, but servers may use it during the deprecation window, and a gateway forwards what they ask (issue 22)

package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// twoServers starts servers "alpha" and "beta", each a Surfaces
// testserver labelled with its name, in memory.
func twoServers(t *testing.T, opts *mcpbind.ManagerOptions) *mcpbind.Manager {
	t.Helper()
	m := newManager(t, opts, stdioServer("alpha"), stdioServer("beta"))
	mcpbind.SetConnectTo(m, func(cfg mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := testserver.New(testserver.Options{Surfaces: cfg.Name}).Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	if err := m.StartAll(context.Background()); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	return m
}

func TestSurfacesListedUnambiguously(t *testing.T) {
	m := twoServers(t, nil)
	ctx := context.Background()
	rs, err := m.Resources(ctx)
	if err != nil {
		t.Fatalf("Resources: %v", err)
	}
	var uris []string
	for _, r := range rs {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	// The README both servers list is served qualified; what only one
	// lists is served as it is.
	want := []string{"basis-mcp://alpha/file:///README.md", "basis-mcp://beta/file:///README.md", "mem://alpha/only", "mem://beta/only"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("resource URIs (-want +got):\n%s", diff)
	}
	ts, err := m.ResourceTemplates(ctx)
	if err != nil {
		t.Fatalf("ResourceTemplates: %v", err)
	}
	var tmpls []string
	for _, tm := range ts {
		tmpls = append(tmpls, tm.URITemplate)
	}
	slices.Sort(tmpls)
	if diff := cmp.Diff([]string{"notes://alpha/{id}", "notes://beta/{id}"}, tmpls); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	ps, err := m.Prompts(ctx)
	if err != nil {
		t.Fatalf("Prompts: %v", err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"mcp__alpha__askprompt", "mcp__alpha__summarize", "mcp__beta__askprompt", "mcp__beta__summarize"}, names); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
}

// run runs a Surface as a runtime would: preview, then execute with the
// same input.
func run(t *testing.T, sf *mcpbind.Surface) contract.Preview {
	t.Helper()
	call := contract.Call{ID: "c1", Input: sf.Input()}
	p, err := sf.AuthorizationPreview(context.Background(), call)
	if err != nil {
		t.Fatalf("AuthorizationPreview: %v", err)
	}
	if _, err := sf.Execute(context.Background(), call); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return p
}

func TestReadResourceRoutesToItsServer(t *testing.T) {
	m := twoServers(t, nil)
	tests := []struct {
		uri, wantText, wantURI, wantServer, wantSubject string
	}{
		{"basis-mcp://beta/file:///README.md", "readme of beta", "basis-mcp://beta/file:///README.md", "beta",
			`{"method":"resources/read","server":{"command":["` + serverBin + `"],"name":"beta","type":"stdio"},"uri":"file:///README.md"}`},
		{"basis-mcp://alpha/file:///README.md", "readme of alpha", "basis-mcp://alpha/file:///README.md", "alpha", ""},
		{"notes://beta/7", "note 7 of beta", "notes://beta/7", "beta", ""},
		{"mem://alpha/only", "", "mem://alpha/only", "alpha", ""},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			sf, err := m.ReadResource(context.Background(), tt.uri)
			if err != nil {
				t.Fatalf("ReadResource: %v", err)
			}
			if sf.Server() != tt.wantServer || sf.Descriptor().Name != "mcp__"+tt.wantServer {
				t.Errorf("server %s, name %s; want %s", sf.Server(), sf.Descriptor().Name, tt.wantServer)
			}
			p := run(t, sf)
			if tt.wantSubject != "" && string(p.Subject) != tt.wantSubject {
				t.Errorf("subject\n got %s\nwant %s", p.Subject, tt.wantSubject)
			}
			if p.SideEffect != contract.SideEffectExternal {
				t.Errorf("side effect %s, want external: a read asks a program", p.SideEffect)
			}
			res := sf.ReadResult()
			if res == nil || len(res.Contents) != 1 {
				t.Fatalf("result %+v", res)
			}
			c := res.Contents[0]
			if c.Text != tt.wantText || c.URI != tt.wantURI {
				t.Errorf("content %q at %q; want %q at %q", c.Text, c.URI, tt.wantText, tt.wantURI)
			}
			if tt.wantText == "" && !slices.Equal(c.Blob, []byte{0, 1, 2, 255}) {
				t.Errorf("blob %v: binary content must pass unchanged", c.Blob)
			}
		})
	}
}

func TestAmbiguousReadNamesTheServers(t *testing.T) {
	m := twoServers(t, nil)
	_, err := m.ReadResource(context.Background(), testserver.ReadmeURI)
	if err == nil {
		t.Fatal("a URI two servers list was read from one of them")
	}
	for _, want := range []string{"basis-mcp://alpha/file:///README.md", "basis-mcp://beta/file:///README.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := m.ReadResource(context.Background(), "basis-mcp://gamma/x"); err == nil {
		t.Error("a qualified URI of no server was accepted")
	}
}

func TestGetPromptAndCompleteRouteToTheOwner(t *testing.T) {
	m := twoServers(t, nil)
	ctx := context.Background()
	sf, err := m.GetPrompt(ctx, "mcp__beta__summarize", map[string]string{"topic": "tides"})
	if err != nil {
		t.Fatalf("GetPrompt: %v", err)
	}
	p := run(t, sf)
	wantSubject := `{"arguments":{"topic":"tides"},"method":"prompts/get","name":"summarize","server":{"command":["` + serverBin + `"],"name":"beta","type":"stdio"}}`
	if string(p.Subject) != wantSubject {
		t.Errorf("subject\n got %s\nwant %s", p.Subject, wantSubject)
	}
	res := sf.PromptResult()
	if res == nil || len(res.Messages) != 2 {
		t.Fatalf("prompt result %+v", res)
	}
	if txt, _ := res.Messages[0].Content.(*mcp.TextContent); txt == nil || txt.Text != "summarize tides (beta)" {
		t.Errorf("first message %+v", res.Messages[0].Content)
	}
	if img, _ := res.Messages[1].Content.(*mcp.ImageContent); img == nil || !slices.Equal(img.Data, []byte{1, 2, 3}) {
		t.Errorf("image message %+v: content must pass unchanged", res.Messages[1].Content)
	}
	if _, err := m.GetPrompt(ctx, "summarize", nil); err == nil {
		t.Error("a prompt name no server serves was resolved")
	}

	for _, tt := range []struct {
		ref  mcp.CompleteReference
		want string
	}{
		{mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__alpha__summarize"}, "alpha:summarize:ti"},
		{mcp.CompleteReference{Type: "ref/resource", URI: "notes://beta/{id}"}, "beta:notes://beta/{id}:ti"},
	} {
		res, err := m.Complete(ctx, &mcp.CompleteParams{Ref: &tt.ref, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "ti"}})
		if err != nil {
			t.Fatalf("Complete(%+v): %v", tt.ref, err)
		}
		if diff := cmp.Diff([]string{tt.want}, res.Completion.Values); diff != "" {
			t.Errorf("Complete(%+v) (-want +got):\n%s", tt.ref, diff)
		}
	}
}

func TestSubscribeRoutesToTheOwner(t *testing.T) {
	m := twoServers(t, nil)
	if err := m.Subscribe(context.Background(), "basis-mcp://beta/file:///README.md"); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	if got := <-testserver.Subscriptions(); got != "beta file:///README.md" {
		t.Errorf("subscription reached %q, want beta file:///README.md", got)
	}
}

// A server's resources/updated reaches OnNotification once for each
// URI a client subscribed to the resource by, and for no other: one
// form's unsubscription leaves the other's in place.
func TestUpdatesReachTheURIsSubscribed(t *testing.T) {
	ctx := context.Background()
	notes := make(chan string, 16)
	m := newManager(t, &mcpbind.ManagerOptions{OnNotification: func(method, uri string) { notes <- method + " " + uri }}, stdioServer("beta"))
	srv := testserver.New(testserver.Options{Surfaces: "beta"})
	mcpbind.SetConnectTo(m, func(mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	const plain, qualified, readme = "mem://beta/only", "basis-mcp://beta/mem://beta/only", "basis-mcp://beta/file:///README.md"
	for _, uri := range []string{plain, qualified, readme} {
		if err := m.Subscribe(ctx, uri); err != nil {
			t.Fatalf("Subscribe %s: %v", uri, err)
		}
	}
	// The server hears one subscription per resource; the others' tests
	// read what they subscribe to.
	for len(testserver.Subscriptions()) > 0 {
		<-testserver.Subscriptions()
	}
	next := func() string {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-time.After(30 * time.Second): // a bound, not a wait
			t.Fatal("no notification")
			return ""
		}
	}
	const updated = "notifications/resources/updated "
	steps := []struct {
		unsubscribe string
		update      string
		want        string // "": nothing, which the next step's notification shows
	}{
		{unsubscribe: plain, update: "mem://beta/only", want: updated + qualified},
		{unsubscribe: qualified, update: "mem://beta/only"},
		{update: "mem://nobody/asked"},
		{update: "file:///README.md", want: updated + readme},
	}
	for _, st := range steps {
		if st.unsubscribe != "" {
			if err := m.Unsubscribe(ctx, st.unsubscribe); err != nil {
				t.Fatalf("Unsubscribe %s: %v", st.unsubscribe, err)
			}
		}
		if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: st.update}); err != nil {
			t.Fatal(err)
		}
		if st.want != "" {
			if got := next(); got != st.want {
				t.Errorf("after an update of %s: %q, want %q", st.update, got, st.want)
			}
		}
	}
}

// A subscription outlives the server's death: the restarted server is
// subscribed again, so its update reaches OnNotification. The server
// announces an update and then a list change; the list change coming
// first would show the update was lost.
func TestSubscriptionsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	notes := make(chan string, 16)
	m := newManager(t, &mcpbind.ManagerOptions{OnNotification: func(method, uri string) { notes <- method + " " + uri }},
		stdioServer("beta", "-surfaces", "beta"))
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	const uri = "basis-mcp://beta/mem://beta/only"
	if err := m.Subscribe(ctx, uri); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	if _, err := call(t, tool(t, m, "beta", "crash"), `{}`); !errors.Is(err, mcpbind.ErrServerDied) {
		t.Fatalf("crash: %v, want ErrServerDied", err)
	}
	change := tool(t, m, "beta", "change")
	for _, in := range []string{`{"what":"updated","uri":"mem://beta/only"}`, `{"what":"resources"}`} {
		if res, err := call(t, change, in); err != nil {
			t.Fatalf("change %s: %v, %q", in, err, res.Text)
		}
	}
	const marker = "notifications/resources/list_changed "
	var got []string
	for !slices.Contains(got, marker) {
		select {
		case n := <-notes:
			got = append(got, n)
		case <-time.After(30 * time.Second): // a bound, not a wait
			t.Fatalf("notifications after the restart: %q, then none", got)
		}
	}
	want := []string{"notifications/resources/updated " + uri, marker}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications after the restart (-want +got):\n%s", diff)
	}
}

// ctxKey marks the context of the call a test makes.
type ctxKey struct{}

func TestServerRequestsReachTheCall(t *testing.T) {
	type seen struct {
		call, server, message string
	}
	got := make(chan seen, 4)
	opts := &mcpbind.ManagerOptions{ServerRequest: func(ctx context.Context, server string, req mcp.InputRequest) (mcp.InputResponse, error) {
		mark, _ := ctx.Value(ctxKey{}).(string)
		switch p := req.(type) {
		case *mcp.ElicitParams:
			got <- seen{mark, server, p.Message}
			if p.Message == "decline me" {
				return nil, errors.New("the client cannot answer")
			}
			if p.Message == "enums" {
				// Not accept: go-sdk's server checks an accepted answer
				// against this schema with the same flaw.
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		case *mcp.CreateMessageWithToolsParams:
			got <- seen{mark, server, "sampling"}
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		}
		return nil, errors.New("unexpected")
	}}
	m := twoServers(t, opts)
	tests := []struct {
		tool, input, want string
		wantSeen          seen
	}{
		{"ask", `{"message":"your name?"}`, `{"action":"accept","content":{"name":"ada"}}`, seen{"call-1", "beta", "your name?"}},
		{"ask", `{"message":"decline me"}`, `{"action":"decline"}`, seen{"call-1", "beta", "decline me"}},
		{"askenums", `{}`, `{"action":"cancel"}`, seen{"call-1", "beta", "enums"}},
		{"askdirect", `{"message":"your name?"}`, `{"action":"accept","content":{"name":"ada"}}`, seen{"call-1", "beta", "your name?"}},
		{"sample", `{}`, "model said hi", seen{"call-1", "beta", "sampling"}},
	}
	for _, tt := range tests {
		ctx := context.WithValue(context.Background(), ctxKey{}, "call-1")
		res, err := tool(t, m, "beta", tt.tool).Execute(ctx, contract.Call{ID: "1", Input: json.RawMessage(tt.input)})
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		if res.Text != tt.want {
			t.Errorf("%s answered %q, want %q", tt.tool, res.Text, tt.want)
		}
		if s := <-got; s != tt.wantSeen {
			t.Errorf("%s: the host saw %+v, want %+v", tt.tool, s, tt.wantSeen)
		}
	}
}

func TestServerRequestsWithoutAHostAreNotDeclared(t *testing.T) {
	m := twoServers(t, nil)
	res, err := tool(t, m, "alpha", "ask").Execute(context.Background(), contract.Call{ID: "1", Input: json.RawMessage(`{"message":"?"}`)})
	// Without a host to answer, basis declares no elicitation, so the
	// server cannot ask.
	if err == nil || !strings.Contains(err.Error(), "does not support elicitation") {
		t.Errorf("ask without a host: %q, %v; want a refusal for the missing capability", res.Text, err)
	}
}

// A server's tool_prefix names its prompts as it names its tools: a
// gateway in front of one server offers them under their own names.
func TestPromptsFollowTheToolPrefix(t *testing.T) {
	own, gh := "", "gh_"
	alpha, beta := stdioServer("alpha"), stdioServer("beta")
	alpha.ToolPrefix, beta.ToolPrefix = &own, &gh
	m := newManager(t, nil, alpha, beta)
	mcpbind.SetConnectTo(m, func(cfg mcpbind.ServerConfig) mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := testserver.New(testserver.Options{Surfaces: cfg.Name}).Connect(context.Background(), server, nil); err != nil {
			t.Errorf("server Connect: %v", err)
		}
		return client
	})
	ctx := context.Background()
	if err := m.StartAll(ctx); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	prompts, err := m.Prompts(ctx)
	if err != nil {
		t.Fatalf("Prompts: %v", err)
	}
	var names []string
	for _, p := range prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"askprompt", "gh_askprompt", "gh_summarize", "summarize"}, names); diff != "" {
		t.Errorf("prompt names (-want +got):\n%s", diff)
	}
	for name, server := range map[string]string{"summarize": "alpha", "gh_summarize": "beta"} {
		sf, err := m.GetPrompt(ctx, name, map[string]string{"topic": "tides"})
		if err != nil {
			t.Fatalf("GetPrompt(%s): %v", name, err)
		}
		run(t, sf)
		res := sf.PromptResult()
		if res == nil || len(res.Messages) == 0 {
			t.Fatalf("GetPrompt(%s): result %+v", name, res)
		}
		if txt, _ := res.Messages[0].Content.(*mcp.TextContent); txt == nil || txt.Text != "summarize tides ("+server+")" {
			t.Errorf("GetPrompt(%s) reached %+v, want server %s", name, res.Messages[0].Content, server)
		}
	}
	if _, err := m.GetPrompt(ctx, "mcp__alpha__summarize", nil); err == nil {
		t.Error("a prompt was found under the default name its server's tool_prefix replaces")
	}
}
