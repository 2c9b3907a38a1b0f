//go:build unix

package mcpbind_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/google/go-cmp/cmp"
)

func TestParseNamingKeys(t *testing.T) {
	doc := `{"mcpServers": {
		"own":  {"command": "x", "tool_prefix": ""},
		"gh":   {"command": "x", "tool_prefix": "gh_", "enabled_tools": ["list_*", "get_issue"], "disabled_tools": ["*_secret"], "max_output_tokens": 500},
		"none": {"command": "x", "enabled_tools": []},
		"dflt": {"command": "x", "tool_prefix": "mcp__dflt__"}
	}}`
	servers, err := mcpbind.ParseConfig("/op/mcp.json", []byte(doc), mcpbind.OriginOperator)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name            string
		Prefix          *string
		Enabled         []string
		Disabled        []string
		MaxOutputTokens int
	}
	var got []row
	for _, s := range servers {
		got = append(got, row{s.Name, s.ToolPrefix, s.EnabledTools, s.DisabledTools, s.MaxOutputTokens})
	}
	want := []row{
		{Name: "dflt", Prefix: new("mcp__dflt__")},
		{Name: "gh", Prefix: new("gh_"), Enabled: []string{"list_*", "get_issue"}, Disabled: []string{"*_secret"}, MaxOutputTokens: 500},
		{Name: "none", Enabled: []string{}},
		{Name: "own", Prefix: new("")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestParseNamingKeysRefusesWithPositions(t *testing.T) {
	tests := []struct {
		name, server string
		want         configfile.Error
		says         string
	}{
		{"another server's namespace", `{"tool_prefix": "mcp__github__"}`,
			configfile.Error{Line: 2, Column: 23, Subject: "server s", Field: "tool_prefix"}, `begins with "mcp__"`},
		{"mcp__ in another case", `{"tool_prefix": "MCP__x_"}`,
			configfile.Error{Line: 2, Column: 23, Subject: "server s", Field: "tool_prefix"}, `begins with "mcp__"`},
		{"characters no provider takes", `{"tool_prefix": "gh."}`,
			configfile.Error{Line: 2, Column: 23, Subject: "server s", Field: "tool_prefix"}, "A-Z a-z 0-9 _ and -"},
		{"too long", `{"tool_prefix": "` + strings.Repeat("p", 33) + `"}`,
			configfile.Error{Line: 2, Column: 23, Subject: "server s", Field: "tool_prefix"}, "longer than 32"},
		{"prefix not a string", `{"tool_prefix": null}`,
			configfile.Error{Line: 2, Column: 23, Subject: "server s", Field: "tool_prefix"}, "must be a string"},
		{"enabled_tools not an array", `{"enabled_tools": "echo"}`,
			configfile.Error{Line: 2, Column: 25, Subject: "server s", Field: "enabled_tools"}, "must be an array"},
		{"an empty pattern", `{"disabled_tools": ["echo", " "]}`,
			configfile.Error{Line: 2, Column: 35, Subject: "server s", Field: "disabled_tools[1]"}, "is empty"},
		{"a pattern not a string", `{"disabled_tools": [1]}`,
			configfile.Error{Line: 2, Column: 27, Subject: "server s", Field: "disabled_tools[0]"}, "must be a string"},
		{"budget zero", `{"max_output_tokens": 0}`,
			configfile.Error{Line: 2, Column: 29, Subject: "server s", Field: "max_output_tokens"}, "from 1 to"},
		{"budget a fraction", `{"max_output_tokens": 1.5}`,
			configfile.Error{Line: 2, Column: 29, Subject: "server s", Field: "max_output_tokens"}, "whole number"},
		{"budget a string", `{"max_output_tokens": "100"}`,
			configfile.Error{Line: 2, Column: 29, Subject: "server s", Field: "max_output_tokens"}, "must be a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := strings.TrimSuffix(tt.server, "}")
			doc := "{\"mcpServers\": {\n\t\"s\": " + entry + `, "command": "x"}}}`
			servers, err := mcpbind.ParseConfig("/op/mcp.json", []byte(doc), mcpbind.OriginOperator)
			if len(servers) != 0 {
				t.Errorf("servers = %v, want the broken one left out", servers)
			}
			var ce *configfile.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no *configfile.Error", err)
			}
			got := configfile.Error{Line: ce.Line, Column: ce.Column, Subject: ce.Subject, Field: ce.Field}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("position (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), tt.says) || !strings.HasPrefix(err.Error(), "/op/mcp.json:") {
				t.Errorf("error %q does not name the file and say %q", err, tt.says)
			}
		})
	}
}

func TestExposedName(t *testing.T) {
	long := strings.Repeat("t", 80)
	tests := []struct {
		prefix *string
		tool   string
		want   string
	}{
		{nil, "echo", "mcp__srv__echo"},
		{new(""), "echo", "echo"},
		{new(""), "a.b", "a_b"},
		{new("gh_"), "list issues", "gh_list_issues"},
		{new(""), long, mcpbind.ExposedName(mcpbind.ServerConfig{Name: "srv", ToolPrefix: new("")}, long)},
	}
	for _, tt := range tests {
		got := mcpbind.ExposedName(mcpbind.ServerConfig{Name: "srv", ToolPrefix: tt.prefix}, tt.tool)
		if got != tt.want {
			t.Errorf("ExposedName(%q) under %v = %q, want %q", tt.tool, tt.prefix, got, tt.want)
		}
		if err := contract.CheckName(got); err != nil {
			t.Errorf("ExposedName(%q) = %q: %v", tt.tool, got, err)
		}
	}
	if got := mcpbind.ExposedName(mcpbind.ServerConfig{Name: "srv", ToolPrefix: new("")}, long); len(got) != contract.MaxNameLen || !strings.HasPrefix(got, "ttt") {
		t.Errorf("a long name under no prefix = %q, want it shortened to %d", got, contract.MaxNameLen)
	}
}

// offeredTools loads one host server with the test server behind it and
// returns its tools' names, the Manager, what the server was called with
// and the error of its list.
func offeredTools(t *testing.T, server mcpbind.ServerConfig, opts testserver.Options) ([]string, *mcpbind.Manager, *[]string, error) {
	t.Helper()
	var mu sync.Mutex
	called := &[]string{}
	opts.OnCall = func(name string) {
		mu.Lock()
		*called = append(*called, name)
		mu.Unlock()
	}
	m := newManager(t, nil, server)
	inMemory(t, m, opts)
	tools, err := m.ServerTools(context.Background(), server.Name)
	return toolNames(tools), m, called, err
}

func TestToolPrefix(t *testing.T) {
	tests := []struct {
		name    string
		prefix  *string
		extra   []string
		want    []string
		refused string
	}{
		{name: "default", prefix: nil, want: []string{"mcp__s__echo", "mcp__s__fail"}},
		{name: "own names", prefix: new(""), want: []string{"echo", "fail"}},
		{name: "a prefix of its own", prefix: new("tk-"), want: []string{"tk-echo", "tk-fail"}},
		// Under its own names a server could offer spawn, or a name that
		// says it is another server's tool: both are refused, named.
		{name: "spawn under own names", prefix: new(""), extra: []string{"Spawn"}, want: []string{"echo", "fail"},
			refused: `MCP server "s": list tools: tool "Spawn" would be named Spawn, which is basis's own tool for commands (spawn)`},
		{name: "another server's name", prefix: new(""), extra: []string{"mcp__github__create_issue"}, want: []string{"echo", "fail"},
			refused: `tool "mcp__github__create_issue" would be named mcp__github__create_issue, a name that says it is a tool of MCP server "github"`},
		{name: "a prefix that spells mcp__", prefix: new("mcp_"), extra: []string{"_x__y"}, want: []string{"mcp_echo", "mcp_fail"},
			refused: `would be named mcp__x__y`},
		{name: "spawn under the default prefix is no clash", prefix: nil, extra: []string{"spawn"}, want: []string{"mcp__s__echo", "mcp__s__fail", "mcp__s__spawn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpbind.ServerConfig{Name: "s", Command: "x", ToolPrefix: tt.prefix, EnabledTools: append([]string{"echo", "fail"}, tt.extra...)}
			names, _, _, err := offeredTools(t, srv, testserver.Options{Names: tt.extra})
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("ServerTools: %v", err)
			case tt.refused != "" && (!errors.Is(err, mcpbind.ErrNameCollision) || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("ServerTools error %v, want one saying %q", err, tt.refused)
			}
		})
	}
}

// The tool keeps its server as its source, whatever its name: previews,
// definitions and rules see the server and the tool's own name.
func TestOwnNamesKeepTheServerAsSource(t *testing.T) {
	srv := mcpbind.ServerConfig{Name: "tickets", Command: "x", ToolPrefix: new("")}
	m := newManager(t, nil, srv)
	inMemory(t, m, testserver.Options{})
	tools, err := m.ServerTools(context.Background(), "tickets")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(tl contract.ExecutableTool) bool { return tl.Descriptor().Name == "echo" })
	if i < 0 {
		t.Fatalf("no tool echo in %v", toolNames(tools))
	}
	tl := tools[i].(*mcpbind.Tool)
	if tl.Server() != "tickets" || mcpbind.RemoteName(tl) != "echo" || tl.Descriptor().Source != "host#tickets" || tl.Descriptor().Binding != contract.BindingMCP {
		t.Errorf("echo: server %q remote %q source %q binding %q", tl.Server(), mcpbind.RemoteName(tl), tl.Descriptor().Source, tl.Descriptor().Binding)
	}
	p, err := tl.AuthorizationPreview(context.Background(), contract.Call{Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Subject), `"name":"tickets"`) || !strings.Contains(p.Summary, `of MCP server "tickets"`) {
		t.Errorf("preview %s / %q does not name the server", p.Subject, p.Summary)
	}
	if server, ok := mcpbind.ServerFor(m, "echo"); !ok || server != "tickets" {
		t.Errorf("ServerFor(echo) = %q, %v; want the server with no prefix", server, ok)
	}
}

func TestStartForStartsServersWithoutAPrefix(t *testing.T) {
	m := newManager(t, nil, mcpbind.ServerConfig{Name: "own", Command: "x", ToolPrefix: new("")},
		mcpbind.ServerConfig{Name: "pre", Command: "x", ToolPrefix: new("p_")},
		mcpbind.ServerConfig{Name: "other", Command: "x"})
	inMemory(t, m, testserver.Options{})
	if err := m.StartFor(context.Background(), "p_echo"); err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, st := range m.Status() {
		if st.State == mcpbind.StateConnected {
			started = append(started, st.Server)
		}
	}
	if diff := cmp.Diff([]string{"own", "pre"}, started); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
}

func TestToolFilters(t *testing.T) {
	tests := []struct {
		name              string
		enabled, disabled []string
		want              []string
		hidden            int
	}{
		{name: "no filter", want: []string{"crash", "echo", "extra00", "extra01", "extra10", "fail", "grow", "header", "image", "leak", "mixed", "progress", "protoerr", "quiet", "sleep", "structured"}},
		{name: "enabled names and globs", enabled: []string{"echo", "extra0*", "*oer*"}, want: []string{"echo", "extra00", "extra01", "protoerr"}, hidden: 12},
		{name: "disabled after enabled", enabled: []string{"e*"}, disabled: []string{"*01", "echo"}, want: []string{"extra00", "extra10"}, hidden: 14},
		{name: "disabled only", disabled: []string{"*"}, want: nil, hidden: 16},
		{name: "enabled empty offers nothing", enabled: []string{}, want: nil, hidden: 16},
		{name: "a glob with two stars", enabled: []string{"*x*1*"}, want: []string{"extra01", "extra10"}, hidden: 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpbind.ServerConfig{Name: "s", Command: "x", ToolPrefix: new(""), EnabledTools: tt.enabled, DisabledTools: tt.disabled}
			names, m, _, err := offeredTools(t, srv, testserver.Options{Names: []string{"extra00", "extra01", "extra10"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if st := m.Status()[0]; st.Hidden != tt.hidden || st.Tools != len(tt.want) {
				t.Errorf("status %+v, want %d tools and %d hidden", st, len(tt.want), tt.hidden)
			}
		})
	}
}

// A hidden tool is no tool: it is neither listed nor callable, so even a
// tool the server offers under the same name as an offered one's never
// receives a call, and a hidden tool frees its name.
func TestHiddenToolIsNeverCalled(t *testing.T) {
	srv := mcpbind.ServerConfig{Name: "s", Command: "x", ToolPrefix: new(""), DisabledTools: []string{"leak", "a.b"}}
	names, m, called, err := offeredTools(t, srv, testserver.Options{Collide: true})
	if err != nil {
		t.Fatalf("a hidden tool still collided: %v", err)
	}
	if slices.Contains(names, "leak") || !slices.Contains(names, "a_b") {
		t.Fatalf("tools %v: leak listed or a_b missing", names)
	}
	for _, tl := range m.Tools() {
		if name := tl.Descriptor().Name; name == "echo" || name == "a_b" {
			if _, err := call(t, tl, `{}`); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diff := cmp.Diff([]string{"a_b", "echo"}, *called); diff != "" {
		t.Errorf("calls the server saw (-want +got):\n%s", diff)
	}
	if slices.Contains(*called, "leak") {
		t.Errorf("the server was called for hidden tool leak: %v", *called)
	}
	if st := m.Status()[0].String(); !strings.Contains(st, "(2 hidden by enabled_tools/disabled_tools)") {
		t.Errorf("status %q does not say what is hidden", st)
	}
}

func TestLayersKeepNamingKeys(t *testing.T) {
	root, conf := realDir(t, t.TempDir()), realDir(t, t.TempDir())
	// Two servers whose default prefixes would be ambiguous are not,
	// once one has a prefix of its own.
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"max_output_tokens": 1000, "mcpServers": {"a": {"command": "x"}, "a_": {"command": "y", "tool_prefix": "ay-"}}}`)
	writeFile(t, filepath.Join(root, ".mcp.json"), `{"max_output_tokens": 99999, "mcpServers": {"w": {"command": "x"}}}`)
	cfg, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Root: root, ConfigDir: conf, Trust: mcphost.NewTrustStore(conf)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 3 {
		t.Errorf("servers %v, want a, a_ and w", cfg.Servers)
	}
	if cfg.MaxOutputTokens != 1000 {
		t.Errorf("MaxOutputTokens = %d, want the operator's 1000 (a workspace file's top-level key is not basis's)", cfg.MaxOutputTokens)
	}
}

func TestHostServerNamingChecked(t *testing.T) {
	_, err := mcpbind.Load(context.Background(), &mcpbind.LoadOptions{Host: []mcpbind.ServerConfig{
		{Name: "a", Command: "x", ToolPrefix: new("mcp__b__")},
		{Name: "c", Command: "x", MaxOutputTokens: -1},
		{Name: "d", Command: "x", DisabledTools: []string{""}},
	}})
	for _, want := range []string{"server a: tool_prefix", "server c: max_output_tokens", "server d: disabled_tools"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load = %v, want it to say %q", err, want)
		}
	}
}
