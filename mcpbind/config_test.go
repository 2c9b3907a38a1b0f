//go:build unix

package mcpbind_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// configView is what a test compares of a ServerConfig: Values are
// compared through their names and values.
type configView struct {
	Name, Type, Command, Cwd, URL string
	Args                          []string
	Env, Headers                  map[string]string
	StartupTimeout, CallTimeout   time.Duration
	TrustAnnotations              bool
}

func view(s mcpbind.ServerConfig) configView {
	values := func(v *mcpbind.Values) map[string]string {
		if v.Len() == 0 {
			return nil
		}
		m := map[string]string{}
		v.Each(func(n, val string) { m[n] = val })
		return m
	}
	return configView{Name: s.Name, Type: s.Type, Command: s.Command, Cwd: s.Cwd, URL: s.URL, Args: s.Args,
		Env: values(s.Env), Headers: values(s.Headers), StartupTimeout: s.StartupTimeout, CallTimeout: s.CallTimeout,
		TrustAnnotations: s.TrustAnnotations}
}

func TestParseConfigServers(t *testing.T) {
	tests := []struct {
		name   string
		origin mcpbind.Origin
		doc    string
		want   []configView
	}{{
		name:   "stdio and http, unknown keys tolerated",
		origin: mcpbind.OriginOperator,
		doc: `{"mcpServers": {
			"git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "${REPO:-.}"], "env": {"TOKEN": "${GIT_TOKEN}"}, "cwd": "sub", "disabled": false, "autoApprove": []},
			"api": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}, "startup_timeout_ms": 500, "call_timeout_ms": 1500, "trust_annotations": true},
			"old": {"type": "sse", "url": "http://localhost:9/sse"}
		}, "otherAgentKey": 1}`,
		want: []configView{
			{Name: "api", Type: "http", URL: "https://api.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${API_KEY}"},
				StartupTimeout: 500 * time.Millisecond, CallTimeout: 1500 * time.Millisecond, TrustAnnotations: true},
			{Name: "git", Type: "stdio", Command: "uvx", Args: []string{"mcp-server-git", "--repository", "${REPO:-.}"},
				Env: map[string]string{"TOKEN": "${GIT_TOKEN}"}, Cwd: "sub"},
			{Name: "old", Type: "sse", URL: "http://localhost:9/sse"},
		},
	}, {
		name:   "a workspace file cannot trust its own annotations",
		origin: mcpbind.OriginWorkspace,
		doc:    `{"mcpServers": {"x": {"command": "x", "trust_annotations": true}}}`,
		want:   []configView{{Name: "x", Type: "stdio", Command: "x"}},
	}, {
		name:   "url without type is http",
		origin: mcpbind.OriginOperator,
		doc:    `{"mcpServers": {"x": {"url": "http://h/mcp"}}}`,
		want:   []configView{{Name: "x", Type: "http", URL: "http://h/mcp"}},
	}, {
		name:   "no servers",
		origin: mcpbind.OriginOperator,
		doc:    `{"mcpServers": {}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcpbind.ParseConfig("/w/.mcp.json", []byte(tt.doc), tt.origin)
			if err != nil {
				t.Fatal(err)
			}
			var views []configView
			for _, s := range got {
				if s.File != "/w/.mcp.json" || s.Origin != tt.origin {
					t.Errorf("server %s: file %q origin %v", s.Name, s.File, s.Origin)
				}
				views = append(views, view(s))
			}
			if diff := cmp.Diff(tt.want, views, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		want     []string // one message per problem
		sentinel error
		servers  []string // the servers that survive
	}{{
		name:     "not JSON",
		doc:      "{\n  \"mcpServers\": {,}\n}",
		want:     []string{"/w/.mcp.json:2:18: not valid JSON here; look for a missing comma, colon or quote, a trailing comma, or a comment"},
		sentinel: mcpbind.ErrSyntax,
	}, {
		name:     "no mcpServers",
		doc:      `{"servers": {}}`,
		want:     []string{`/w/.mcp.json:1:1: mcpServers: missing; an MCP config is {"mcpServers": {"NAME": {"command": "..."}}}`},
		sentinel: mcpbind.ErrMissingField,
	}, {
		name:     "not an object",
		doc:      `[]`,
		want:     []string{`/w/.mcp.json:1:1: an MCP config is a JSON object such as {"mcpServers": {}}, not an array`},
		sentinel: mcpbind.ErrWrongType,
	}, {
		name: "neither command nor url, other servers kept",
		doc: `{"mcpServers": {
  "a": {"args": ["x"]},
  "b": {"command": "b"}
}}`,
		want:     []string{`/w/.mcp.json:2:8: server a: command: a server needs "command" (a program to start) or "url" (a server to reach)`},
		sentinel: mcpbind.ErrMissingField,
		servers:  []string{"b"},
	}, {
		name:     "unknown type is quoted",
		doc:      `{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}`,
		want:     []string{`/w/.mcp.json:1:31: server a: type: unknown type "websocket"; use stdio, http or sse`},
		sentinel: mcpbind.ErrUnknownType,
	}, {
		name: "a type that may be a value is located, not quoted",
		doc: `{"mcpServers": {"a": {"type": "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "url": "http://h"},
 "b": {"type": "sekrit123", "url": "http://h"}, "c": {"type": "http2", "url": "http://h"}}}`,
		want: []string{
			`/w/.mcp.json:1:31: server a: type: unknown type (not shown: it may be a value written in the wrong place); use stdio, http or sse`,
			`/w/.mcp.json:2:16: server b: type: unknown type (not shown: it may be a value written in the wrong place); use stdio, http or sse`,
			`/w/.mcp.json:2:63: server c: type: unknown type "http2"; use stdio, http or sse`,
		},
		sentinel: mcpbind.ErrUnknownType,
	}, {
		name:     "columns count characters, not bytes",
		doc:      "{\"mcpServers\": {\"üaïb€\": {\"command\": 5}}}",
		want:     []string{`/w/.mcp.json:1:38: server üaïb€: command: must be a string, not a number`},
		sentinel: mcpbind.ErrWrongType,
	}, {
		name:     "empty file",
		doc:      " \n",
		want:     []string{`/w/.mcp.json:1:1: the file is empty; an MCP config is an object such as {"mcpServers": {}}`},
		sentinel: mcpbind.ErrSyntax,
	}, {
		name:     "more after the object",
		doc:      "{\"mcpServers\": {}}\n{}",
		want:     []string{`/w/.mcp.json:2:1: there is more after the JSON object ends; a config file is one object`},
		sentinel: mcpbind.ErrSyntax,
	}, {
		name:     "file ends early",
		doc:      "{\"mcpServers\": {\"a\": {\"command\": \"sekrit",
		want:     []string{`/w/.mcp.json:1:41: the file ends before its JSON is complete; look for a missing }, ] or "`},
		sentinel: mcpbind.ErrSyntax,
	}, {
		name: "wrong types never quote values",
		doc: `{"mcpServers": {"a": {"command": "x", "args": "sekrit-arg", "env": {"K": 5}},
 "b": {"url": 7}}}`,
		want: []string{
			`/w/.mcp.json:1:47: server a: args: must be an array of strings, not a string`,
			`/w/.mcp.json:1:74: server a: env.K: must be a string, not a number`,
			`/w/.mcp.json:2:15: server b: url: must be a string, not a number`,
		},
		sentinel: mcpbind.ErrWrongType,
	}, {
		name:     "malformed placeholder names the variable and field",
		doc:      `{"mcpServers": {"a": {"command": "x", "env": {"T": "${TOKEN"}}}}`,
		want:     []string{`/w/.mcp.json:1:52: server a: env.T: the ${ at character 1 is never closed with }`},
		sentinel: mcpbind.ErrPlaceholder,
	}, {
		name:     "duplicate server",
		doc:      `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
		want:     []string{`/w/.mcp.json:1:40: server a: the server name is written twice; keep one`},
		sentinel: mcpbind.ErrDuplicateKey,
	}, {
		name:     "timeout out of range",
		doc:      `{"mcpServers": {"a": {"command": "x", "call_timeout_ms": 0}}}`,
		want:     []string{`/w/.mcp.json:1:58: server a: call_timeout_ms: must be a whole number of milliseconds from 1 to 86400000`},
		sentinel: mcpbind.ErrInvalidValue,
	}, {
		name:     "header with a line break",
		doc:      `{"mcpServers": {"a": {"url": "http://h", "headers": {"X": "a\r\nInjected: 1"}}}}`,
		want:     []string{`/w/.mcp.json:1:59: server a: headers.X: holds a line break, which would end the header early`},
		sentinel: mcpbind.ErrInvalidValue,
	}, {
		name:     "both command and url",
		doc:      `{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`,
		want:     []string{`/w/.mcp.json:1:22: server a: has both "command" and "url"; keep one, or set "type"`},
		sentinel: mcpbind.ErrInvalidValue,
	}, {
		name:     "a workspace names a client secret",
		doc:      `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"client_id": "c", "client_secret": "sekrit-1"}}, "b": {"command": "b"}}}`,
		want:     []string{`/w/.mcp.json:1:92: server a: oauth.client_secret: a workspace's .mcp.json may not name a client secret: put the server, with its client_secret, in your own <config dir>/mcp.json`},
		sentinel: mcpbind.ErrInvalidValue,
		servers:  []string{"b"},
	}, {
		name:     "oauth on a stdio server",
		doc:      `{"mcpServers": {"a": {"command": "x", "oauth": {}}}}`,
		want:     []string{`/w/.mcp.json:1:48: server a: oauth: only an http or sse server signs in; remove "oauth"`},
		sentinel: mcpbind.ErrInvalidValue,
	}, {
		name:     "a client metadata document not at an https URL",
		doc:      `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"client_metadata_url": "http://h/c.json"}}}}`,
		want:     []string{`/w/.mcp.json:1:80: server a: oauth.client_metadata_url: must be an https URL with a path, such as https://example.com/basis-client.json`},
		sentinel: mcpbind.ErrInvalidValue,
	}, {
		name:     "oauth not an object",
		doc:      `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": true}}}`,
		want:     []string{`/w/.mcp.json:1:56: server a: oauth: must be an object such as {"client_id": "..."} or {}, not a boolean`},
		sentinel: mcpbind.ErrWrongType,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := mcpbind.ParseConfig("/w/.mcp.json", []byte(tt.doc), mcpbind.OriginWorkspace)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
			var ce *configfile.Error
			if !errors.As(err, &ce) {
				t.Errorf("error %v holds no *ConfigError", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			var names []string
			for _, s := range servers {
				names = append(names, s.Name)
			}
			if diff := cmp.Diff(tt.servers, names); diff != "" {
				t.Errorf("surviving servers (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("error quotes a value: %v", err)
			}
		})
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my.server", "get file/v2", "mcp__my_server__get_file_v2"},
		{"s", "héllo-wörld", "mcp__s__h_llo-w_rld"},
		{"s", "", "mcp__s___"},
		{"s", long, "mcp__s__" + strings.Repeat("x", 47) + "_" + hashOf("s\x00" + long)[:8]},
	}
	for _, tt := range tests {
		got := mcpbind.ToolName(tt.server, tt.tool)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ToolName(%q, %q) (-want +got):\n%s", tt.server, tt.tool, diff)
		}
		if len(got) > 64 {
			t.Errorf("ToolName(%q, %q) is %d characters", tt.server, tt.tool, len(got))
		}
	}
	a, b := mcpbind.ToolName("s", long+"a"), mcpbind.ToolName("s", long+"b")
	if a == b || len(a) != 64 || a != mcpbind.ToolName("s", long+"a") {
		t.Errorf("shortened names are not distinct and deterministic: %s %s", a, b)
	}
}

func TestConfigPrintsWithoutCredentials(t *testing.T) {
	s := mcpbind.ServerConfig{Name: "api", Type: "http", URL: "https://me:pw-123456@h.example/mcp?key=k-123456",
		Headers: mcpbind.NewValues(map[string]string{"Authorization": "Bearer b-123456"}), Origin: mcpbind.OriginOperator,
		OAuth: &mcpbind.OAuthConfig{ClientID: "cid", ClientSecret: "cs-123456", Scopes: []string{"read"}}}
	tests := []struct {
		name, got, want string
	}{
		{"%v", fmt.Sprintf("%v", s), `{api http  [] {}  https://h.example/mcp?[redacted] {Authorization=[redacted]} 0s 0s false  operator  <nil> [] [] 0 { cid [redacted] [read]}}`},
		{"%s", fmt.Sprintf("%s", s), s.String()},
		{"%#v", fmt.Sprintf("%#v", s), `mcpbind.configView{Name:"api", Type:"http", Command:"", Args:[]string(nil), Env:mcpbind.Values{}, Cwd:"", URL:"https://h.example/mcp?[redacted]", Headers:mcpbind.Values{Authorization=[redacted]}, StartupTimeout:0, CallTimeout:0, TrustAnnotations:false, File:"", Origin:"operator", Root:"", ToolPrefix:interface {}(nil), EnabledTools:[]string(nil), DisabledTools:[]string(nil), MaxOutputTokens:0, OAuth:mcpbind.oauthView{ClientMetadataURL:"", ClientID:"cid", ClientSecret:"[redacted]", Scopes:[]string{"read"}}}`},
		{"String", s.String(), `{Name:api Type:http Command: Args:[] Env:{} Cwd: URL:https://h.example/mcp?[redacted] Headers:{Authorization=[redacted]} StartupTimeout:0s CallTimeout:0s TrustAnnotations:false File: Origin:operator Root: ToolPrefix:<nil> EnabledTools:[] DisabledTools:[] MaxOutputTokens:0 OAuth:{ClientMetadataURL: ClientID:cid ClientSecret:[redacted] Scopes:[read]}}`},
		{"JSON", mustJSON(t, s), `{"Name":"api","Type":"http","Command":"","Args":null,"Env":null,"Cwd":"","URL":"https://h.example/mcp?[redacted]","Headers":{"Authorization":"[redacted]"},"StartupTimeout":0,"CallTimeout":0,"TrustAnnotations":false,"File":"","Origin":"operator","Root":"","ToolPrefix":null,"EnabledTools":null,"DisabledTools":null,"MaxOutputTokens":0,"OAuth":{"ClientID":"cid","ClientSecret":"[redacted]","Scopes":["read"]}}`},
	}
	// A prefix prints as the prefix, never as a pointer.
	s.ToolPrefix = new("gh_")
	tests = append(tests, struct{ name, got, want string }{"prefix", fmt.Sprintf("%v", s), `{api http  [] {}  https://h.example/mcp?[redacted] {Authorization=[redacted]} 0s 0s false  operator  gh_ [] [] 0 { cid [redacted] [read]}}`})
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlaceholderProblemsKeepTheSharedError: a placeholder problem wraps
// this package's sentinel and, beneath it, configfile's typed error, so a
// host can handle placeholders alike whichever file they came from.
func TestPlaceholderProblemsKeepTheSharedError(t *testing.T) {
	tests := []struct {
		name     string
		err      func() error
		sentinel error
		kind     configfile.PlaceholderKind
		variable string
	}{{
		name: "malformed, at parse",
		err: func() error {
			_, err := mcpbind.ParseConfig("/w/.mcp.json", []byte(`{"mcpServers": {"a": {"command": "x", "args": ["${T-x}"]}}}`), mcpbind.OriginWorkspace)
			return err
		},
		sentinel: mcpbind.ErrPlaceholder, kind: configfile.PlaceholderUnsupported, variable: "T",
	}, {
		name: "unset, at start",
		err: func() error {
			s := mcpbind.ServerConfig{Name: "a", Type: "stdio", Command: "x", Args: []string{"--token=${MCPBIND_TEST_UNSET}"}}
			return s.CheckVariables(func(string) (string, bool) { return "", false })
		},
		sentinel: mcpbind.ErrUnsetVariable, kind: configfile.PlaceholderUnset, variable: "MCPBIND_TEST_UNSET",
	}}
	for _, tt := range tests {
		err := tt.err()
		var ce *configfile.Error
		var xe *configfile.ExpandError
		if !errors.Is(err, tt.sentinel) || !errors.As(err, &ce) || !errors.As(err, &xe) {
			t.Errorf("%s: %v wraps no %v, *ConfigError and *configfile.ExpandError", tt.name, err, tt.sentinel)
			continue
		}
		if diff := cmp.Diff([3]any{tt.kind, tt.variable, "server a"}, [3]any{xe.Kind, xe.Variable, ce.Subject}); diff != "" {
			t.Errorf("%s: kind and variable (-want +got):\n%s", tt.name, diff)
		}
	}
}
