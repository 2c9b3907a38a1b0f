//go:build !nomcp

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// elicitWorkspace is a workspace whose operator mcp.json names mcpbind's
// test server, with its tools that ask (ask, askdirect, askenums, sample),
// as the server "t".
func elicitWorkspace(t *testing.T) (ws, config string) {
	t.Helper()
	dir := t.TempDir()
	ws, config = filepath.Join(dir, "ws"), filepath.Join(dir, "config")
	write(t, filepath.Join(config, "mcp.json"), fmt.Sprintf(`{"mcpServers": {"t": {"command": %q, "args": ["-surfaces", "L"]}}}`, mcpTestServerBinary))
	write(t, filepath.Join(ws, "README"), "a workspace\n")
	return ws, config
}

// --elicit answers a server's questions during basis call: with the
// form's defaults, or not at all; sampling is always declined.
func TestCallAnswersAServersQuestions(t *testing.T) {
	ws, config := elicitWorkspace(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string // in stdout
		notWant  []string
	}{{
		name:     "defaults accepts the form with its defaults (an input request, protocol 2026-07-28 style)",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__ask", `{"message": "who?"}`},
		wantCode: exitOK,
		want:     []string{`"action":"accept"`, `"name":"x"`},
	}, {
		name:     "defaults accepts a form without defaults or required fields empty (elicitation/create)",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__askdirect", `{"message": "who?"}`},
		wantCode: exitOK,
		want:     []string{`"action":"accept"`},
		notWant:  []string{`"name"`},
	}, {
		name:    "decline offers no elicitation: the server cannot ask",
		args:    []string{"call", "--approve", "allow", "--elicit", "decline", "mcp__t__askdirect", `{"message": "who?"}`},
		notWant: []string{`"action":"accept"`},
		// The server says how its question failed; the call fails.
		wantCode: exitFailed,
	}, {
		name:     "without a terminal the default is decline",
		args:     []string{"call", "--approve", "allow", "mcp__t__askdirect", `{"message": "who?"}`},
		notWant:  []string{`"action":"accept"`},
		wantCode: exitFailed,
	}, {
		name:     "a sampling request is declined: basis has no model",
		args:     []string{"call", "--approve", "allow", "--elicit", "defaults", "mcp__t__sample", `{}`},
		wantCode: exitFailed,
		want:     []string{"declined"},
	}, {
		name:     "an unknown mode is a usage error",
		args:     []string{"call", "--approve", "allow", "--elicit", "always", "mcp__t__ask", `{}`},
		wantCode: exitUsage,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runBasis(t, ws, config, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %s:\n%s\nstderr:\n%s", w, out, errOut)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("stdout holds %s:\n%s", w, out)
				}
			}
		})
	}
}

func TestReadFormAndDefaults(t *testing.T) {
	tests := []struct {
		name         string
		schema       string
		wantErr      bool
		wantDefaults string // JSON; "" when a required field has none
	}{{
		name: "every primitive with its default, in the schema's order",
		schema: `{"type": "object", "properties": {"s": {"type": "string", "default": "a"}, "i": {"type": "integer", "default": 3},
			"n": {"type": "number", "default": 1.5}, "b": {"type": "boolean", "default": true}, "e": {"type": "string", "enum": ["x", "y"], "default": "y"}}}`,
		wantDefaults: `{"b":true,"e":"y","i":3,"n":1.5,"s":"a"}`,
	}, {
		name:         "an optional field without a default is left out",
		schema:       `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		wantDefaults: `{}`,
	}, {
		name:   "a required field without a default declines",
		schema: `{"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}`,
	}, {
		name:    "a nested object is no form",
		schema:  `{"type": "object", "properties": {"o": {"type": "object"}}}`,
		wantErr: true,
	}, {
		name:    "not an object",
		schema:  `{"type": "string"}`,
		wantErr: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := jsonUnmarshal(tt.schema, &schema); err != nil {
				t.Fatal(err)
			}
			f, err := readForm(schema)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readForm: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			content, ok := f.defaults()
			got := ""
			if ok {
				got = jsonString(t, content)
			}
			if got != tt.wantDefaults {
				t.Errorf("defaults = %s, want %s", got, tt.wantDefaults)
			}
		})
	}
}

// A terminal answer must parse as the field's type, and be one of its
// choices.
func TestFieldParse(t *testing.T) {
	tests := []struct {
		f       field
		in      string
		want    string
		wantErr bool
	}{
		{field{Type: "integer"}, "42", "42", false},
		{field{Type: "integer"}, "4.2", "", true},
		{field{Type: "number"}, "4.5", "4.5", false},
		{field{Type: "boolean"}, "yes", "true", false},
		{field{Type: "boolean"}, "maybe", "", true},
		{field{Type: "string", Choices: []string{"red", "blue"}}, "blue", `"blue"`, false},
		{field{Type: "string", Choices: []string{"red", "blue"}}, "green", "", true},
		{field{Type: "array", Choices: []string{"a", "b"}}, "a, b", `["a","b"]`, false},
		{field{Type: "array", Choices: []string{"a", "b"}}, "a,c", "", true},
		{field{Type: "string"}, "anything", `"anything"`, false},
	}
	for _, tt := range tests {
		v, err := tt.f.parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%+v.parse(%q): %v, want error %v", tt.f, tt.in, err, tt.wantErr)
			continue
		}
		if err == nil {
			if got := jsonString(t, v); got != tt.want {
				t.Errorf("%+v.parse(%q) = %s, want %s", tt.f, tt.in, got, tt.want)
			}
		}
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := jsonEncode(&b, v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func jsonEncode(b *bytes.Buffer, v any) error { return json.NewEncoder(b).Encode(v) }
