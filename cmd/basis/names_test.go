//go:build unix && !nomcp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"os/exec"
)

// basisAll runs the binary to its end and returns its stdout and stderr.
func (r *serveRig) basisAll(t *testing.T, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(basisBinary, append([]string{"-C", r.ws}, args...)...)
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("basis %s: exit %d (%v), want %d\n%s", strings.Join(args, " "), code, err, want, out)
	}
	return string(out)
}

// namedServer configures mcpbind's test server in the operator's mcp.json
// under entry's extra keys.
func namedServer(t *testing.T, r *serveRig, top, entry string, args ...string) {
	t.Helper()
	a, _ := json.Marshal(append([]string{"-big"}, args...))
	write(t, filepath.Join(r.config, "mcp.json"), fmt.Sprintf(`{%s"mcpServers": {"t": {"command": %q, "args": %s%s}}}`, top, mcpTestServerBinary, a, entry))
}

// Through basis serve, a server with "tool_prefix": "" is served under
// its tools' own names, its enabled_tools/disabled_tools hide the rest
// (listed nowhere, refused as unknown), and a result over the operator's
// budget is cut with a note naming the file that keeps it whole.
func TestServeToolPrefixFiltersAndBudget(t *testing.T) {
	r := newServeRig(t)
	namedServer(t, r, `"max_output_tokens": 40, `, `, "tool_prefix": "", "enabled_tools": ["echo", "big", "le*"], "disabled_tools": ["leak"]`)
	s := r.serve(t, nil, "--approve", "allow")
	list, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "big", "deploy", "mcp__stockroom__stock_level"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list %v lacks %s", names, want)
		}
	}
	for _, hidden := range []string{"leak", "fail", "mcp__t__echo"} {
		if slices.Contains(names, hidden) {
			t.Errorf("tools/list %v offers %s", names, hidden)
		}
	}
	if text, isErr := s.call(t, "echo", map[string]any{"said": "hi"}); isErr || !strings.Contains(text, `"said":"hi"`) {
		t.Errorf("echo: isError %v, %q", isErr, text)
	}
	// A hidden tool is refused as unknown: the call never reaches the
	// server, which would have answered with an error of its own.
	if text, isErr := s.call(t, "leak", map[string]any{"name": "HOME"}); !isErr || !strings.Contains(text, `no tool named "leak"`) || strings.Contains(text, "the value is") {
		t.Errorf("leak: isError %v, %q; want it refused as unknown", isErr, text)
	}
	text, isErr := s.call(t, "big", map[string]any{"text": "0123456789\n", "times": 100})
	if isErr {
		t.Fatalf("big: %s", text)
	}
	m := regexp.MustCompile(`the whole result is in (\S+);`).FindStringSubmatch(text)
	if m == nil || !strings.HasPrefix(text, strings.Repeat("0123456789\n", 14)+"\n[basis: ") {
		t.Fatalf("big: %q, want the first 154 bytes (cut at a line) and a note", text)
	}
	if want := filepath.Join(r.ws, ".cache", "basis", "mcp-output") + "/"; !strings.HasPrefix(m[1], want) {
		t.Errorf("kept in %s, want under %s", m[1], want)
	}
	kept, err := os.ReadFile(m[1])
	if err != nil || !strings.HasPrefix(string(kept), strings.Repeat("0123456789\n", 100)) {
		t.Errorf("the kept result: %v, %d bytes", err, len(kept))
	}
}

// basis tools, the audit and the preview show the name a tool is offered
// under, and its server as its source.
func TestCLIToolPrefix(t *testing.T) {
	r := newServeRig(t)
	namedServer(t, r, "", `, "tool_prefix": "t-", "disabled_tools": ["fail"], "enabled_tools": ["echo", "fail"]`)
	out := r.basis(t, 0, "tools")
	if !strings.Contains(out, "t-echo") || strings.Contains(out, "t-fail") || !strings.Contains(out, "hidden by enabled_tools/disabled_tools") {
		t.Errorf("basis tools:\n%s", out)
	}
	out = r.basis(t, 0, "tools", "--json")
	if !strings.Contains(out, `"t-echo"`) || !strings.Contains(out, filepath.Join(r.config, "mcp.json")+`#t"`) {
		t.Errorf("basis tools --json does not name t-echo and its server:\n%s", out)
	}
	audit := filepath.Join(r.ws, "audit.jsonl")
	r.basis(t, 0, "call", "t-echo", `{"x": 1}`, "--approve", "allow", "--audit", audit)
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Tool    string          `json:"tool"`
		Subject json.RawMessage `json:"subject"`
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(first), &rec); err != nil {
		t.Fatalf("audit %s: %v", b, err)
	}
	if rec.Tool != "t-echo" || !strings.Contains(string(rec.Subject), `"tool":"echo"`) || !strings.Contains(string(rec.Subject), `"name":"t"`) {
		t.Errorf("audit record %s: want tool t-echo, and the server t's tool echo in the subject", b)
	}
	// A rule is written for the exposed name, bound to the config file.
	r.basis(t, 0, "rules", "add", "--tool", "t-echo", "--allow")
	r.basis(t, 0, "call", "t-echo", `{}`)
}

// A server's tool under its own names that takes a declared tool's name,
// or spawn's, is refused when the tools load, naming both.
func TestToolPrefixCollisionsAreRefused(t *testing.T) {
	r := newServeRig(t)
	namedServer(t, r, "", `, "tool_prefix": "", "enabled_tools": ["deploy", "echo"]`, "-names", "deploy")
	out := r.basisAll(t, 2, "call", "echo", `{}`, "--approve", "allow")
	if !strings.Contains(out, `tool "deploy" from `+filepath.Join(r.config, "mcp.json")+`#t collides with tool "deploy" from `) {
		t.Errorf("the collision does not name both sources:\n%s", out)
	}
	namedServer(t, r, "", `, "tool_prefix": "", "enabled_tools": ["spawn", "echo"]`, "-names", "spawn")
	out = r.basisAll(t, 0, "tools")
	if !strings.Contains(out, `tool "spawn" would be named spawn, which is basis's own tool`) {
		t.Errorf("a server's tool named spawn is not refused by name:\n%s", out)
	}
}
