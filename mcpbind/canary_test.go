//go:build unix

package mcpbind_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCanarySecretAppearsNowhere puts credentials where configs put them
// — env values, header values, ${VAR} expansions in a URL's query and in
// a command — and looks for them in everything basis shows: prints of
// the config in every verb, JSON, slog, statuses, descriptors, previews,
// errors (start failures, isError texts, stderr tails) and results.
func TestCanarySecretAppearsNowhere(t *testing.T) {
	random := func() string {
		b := make([]byte, 8)
		rand.Read(b)
		return "canary-" + hex.EncodeToString(b)
	}
	expanded, literal, inURL := random(), random(), random()
	lookup := func(name string) (string, bool) {
		if name == "MCPBIND_CANARY" {
			return expanded, true
		}
		return "", false
	}

	srv := testserver.New(testserver.Options{})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)

	conf := realDir(t, t.TempDir())
	writeFile(t, filepath.Join(conf, "mcp.json"), fmt.Sprintf(`{"mcpServers": {
		"leaky": {"command": %q, "env": {"API_TOKEN": "${MCPBIND_CANARY}", "LITERAL": %q}},
		"web": {"type": "http", "url": "%s/?key=${MCPBIND_CANARY}", "headers": {"Authorization": "Bearer ${MCPBIND_CANARY}", "X-Literal": %q}},
		"nocmd": {"command": "/nonexistent/${MCPBIND_CANARY}"},
		"deadurl": {"url": "http://user:%s@127.0.0.1:1/mcp?token=%s", "startup_timeout_ms": 2000}
	}}`, serverBin, literal, web.URL, literal, inURL, inURL))

	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{ConfigDir: conf})
	if err != nil {
		t.Fatal(err)
	}
	m := mcpbind.NewManager(cfg, &mcpbind.ManagerOptions{Lookup: lookup, Logger: logger,
		Env: append([]string{"PATH=/usr/bin:/bin"}, "MCPBIND_CANARY="+expanded)})
	t.Cleanup(func() { m.Close() })

	for _, s := range cfg.Servers {
		fmt.Fprintf(&out, "%v %+v %#v %s\n", s, s, s, s.Env)
		fmt.Fprintf(&out, "%v %+v %#v %s %q %x\n", s.Headers, s.Headers, s.Headers, s.Headers, s.Headers, s.Headers)
		logger.Info("server", "config", s, "env", s.Env, "headers", s.Headers)
	}
	fmt.Fprintf(&out, "%v %+v %#v\n", cfg, cfg, *cfg)
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(j)

	fmt.Fprintln(&out, m.StartAll(context.Background()))
	fmt.Fprintln(&out, m.Status())
	for _, tl := range m.Tools() {
		d, _ := json.Marshal(tl.Descriptor())
		out.Write(d)
		p, err := tl.AuthorizationPreview(context.Background(), contract.Call{Input: []byte(`{"Name":"API_TOKEN"}`)})
		fmt.Fprintln(&out, p.Summary, string(p.Subject), err)
	}
	for _, c := range []struct{ server, tool, input string }{
		{"leaky", "leak", `{"Name":"API_TOKEN"}`},
		{"leaky", "leak", `{"Name":"LITERAL"}`},
		{"leaky", "leak", `{"Name":"MCPBIND_CANARY"}`},
		{"web", "header", `{"Name":"Authorization"}`},
		{"web", "header", `{"Name":"X-Literal"}`},
		{"leaky", "crash", `{}`},
		{"leaky", "mixed", `{"Name":"API_TOKEN"}`},
		{"leaky", "mixed", `{"Name":"MCPBIND_CANARY","Error":true}`},
	} {
		res, err := call(t, tool(t, m, c.server, c.tool), c.input)
		fmt.Fprintf(&out, "%s %v %+v\n", res.Text, err, err)
		// The content passed on to an MCP client holds no secret either,
		// for a result and for an isError one.
		if re, ok := errors.AsType[*contract.ResultError](err); ok {
			res = re.Result
		}
		for _, b := range res.Content {
			fmt.Fprintf(&out, "%s\n", b)
		}
		fmt.Fprintf(&out, "%s %s\n", res.Structured, res.Meta)
	}
	fmt.Fprintln(&out, m.Start(context.Background(), "nocmd"))
	fmt.Fprintln(&out, m.Start(context.Background(), "deadurl"))
	fmt.Fprintln(&out, m.Close())

	text := out.String()
	if testing.Verbose() {
		t.Log(text)
	}
	for _, secret := range []string{expanded, literal, inURL} {
		if strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			t.Errorf("a secret appears in the output: ...%s...", text[max(i-200, 0):i])
		}
	}
	// The checks above mean something only if the secrets reached the
	// servers and came back redacted.
	for _, want := range []string{"the value is [redacted]", "leaking [redacted]", "got [redacted]", `"text":"mixed [redacted]"`, `"text":"doc [redacted]"`, `"value":"[redacted]"`, `"example.com/trace":"t-[redacted]"`, "{API_TOKEN=[redacted], LITERAL=[redacted]}", `"API_TOKEN":"[redacted]"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}
