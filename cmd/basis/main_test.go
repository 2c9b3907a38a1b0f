package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/sandbox"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// step is one invocation of basis within a case.
type step struct {
	args  []string
	stdin string
	env   []string // added to the case's environment
	dir   string   // the current directory, relative to the workspace
	// terminal, when not zero, plays a terminal of that width on stderr.
	terminal int
	want     int // exit status
	// before, when set, changes the workspace before the step, as a
	// repository, a git pull or a sandboxed command would.
	before *edit
}

// edit is a change to the workspace between steps; its note is what the
// transcript shows of it.
type edit struct {
	note string
	do   func(t *testing.T, ws, config string)
}

// canary is a credential planted in every step's environment. The
// workspace's deploy tool passes it on through env and through a ${VAR} in
// its command; the runner fails a case whose transcript shows it, so
// -update can never write a leak into a golden file.
const canary = "canary-deploy-token-8c1e"

// cliCase is a sequence of invocations against a fresh copy of
// testdata/workspace and an empty config directory. Its golden file holds
// every step's command line, exit status, stdout and stderr.
type cliCase struct {
	name  string
	setup func(t *testing.T, ws, config string)
	steps []step
	// mcp: the case needs MCP in the build (basis serve, say); a -tags
	// nomcp build says only that the command is not in it.
	mcp bool
}

func one(want int, args ...string) []step { return []step{{args: args, want: want}} }

func TestCallWritesAnAuditRecordWithoutSecrets(t *testing.T) {
	ws, config := copyWorkspace(t), t.TempDir()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		environ:     []string{"PATH=" + os.Getenv("PATH"), "BASIS_CONFIG_DIR=" + config, "DEPLOY_TOKEN=" + canary},
		getwd:       func() (string, error) { return ws, nil },
		interactive: func() bool { return false },
	}
	for _, args := range [][]string{
		{"call", "deploy", `{"service": "api"}`, "--approve", "allow", "--audit", audit},
		{"call", "deploy", `{"service": "db"}`, "--approve", "allow", "--audit", audit},
	} {
		run(context.Background(), args, e)
	}
	if got, _, _ := strings.Cut(stdout.String(), "\n"); got != fmt.Sprintf("deployed (token %d characters long)", len(canary)) {
		t.Fatalf("the program did not get the token: stdout %q, stderr %q", got, stderr.String())
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), canary) {
		t.Fatalf("the audit file holds the secret:\n%s", data)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, line)
		}
		delete(rec, "time")
		delete(rec, "duration_ms")
		recs = append(recs, rec)
	}
	// Every invocation has a call id of its own.
	var ids []string
	for _, rec := range recs {
		id, _ := rec["call_id"].(string)
		if !callID.MatchString(id) {
			t.Errorf("call id %q is not cli- and 16 hex digits", id)
		}
		ids = append(ids, id)
		delete(rec, "call_id")
	}
	// The call that ran has its start and its end under one id; the
	// refused one, its end under another.
	if len(ids) != 3 || ids[0] != ids[1] || ids[1] == ids[2] {
		t.Errorf("call ids %q: want the first call's twice, then another", ids)
	}
	source := filepath.Join(ws, ".basis", "tools.json")
	// The sandbox is part of what was approved: the default one, with
	// however this machine cuts the network.
	box, err := sandbox.New(sandbox.Policy{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	cache := box.CacheDir()
	writable := []any{"${TMPDIR}"}
	for _, dir := range slices.Sorted(slices.Values([]string{cache, ws})) {
		writable = append(writable, dir)
	}
	subject, _ := recs[0]["subject"].(map[string]any)
	sb, _ := subject["sandbox"].(map[string]any)
	ran := func(event string) map[string]any {
		rec := map[string]any{"event": event, "tool": "deploy", "binding": "declared", "source": source, "side_effect": "external",
			"subject": map[string]any{"command": []any{"./.basis/tools/deploy.sh", "--token", "${DEPLOY_TOKEN:-none}"}, "cwd": ".",
				"env": []any{"DEPLOY_TOKEN"}, "input": map[string]any{"service": "api"}, "program": filepath.Join(ws, ".basis", "tools", "deploy.sh"), "tool": "deploy",
				"sandbox": map[string]any{"mode": "workspace-write", "network": "none", "network_cut": sb["network_cut"], "write": writable,
					"protected": []any{filepath.Join(ws, ".basis")}}},
			"verdict": map[string]any{"allow": true, "source": "approver", "reason": recs[0]["verdict"].(map[string]any)["reason"]}}
		if event == "end" {
			rec["outcome"] = "ok"
		}
		return rec
	}
	want := []map[string]any{
		ran("start"),
		ran("end"),
		{"event": "end", "tool": "deploy", "binding": "declared", "source": source, "outcome": "refused", "stage": "invalid",
			"refusal": "the input for deploy does not match its schema: /service: is not one of the values the schema allows (enum)"},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

func TestCLI(t *testing.T) {
	delegate := filepath.Join(testdata, "delegate.sh")
	approveHook := filepath.Join(testdata, "approve.sh")
	cases := []cliCase{
		// Global usage.
		{name: "no_command", steps: one(exitUsage)},
		{name: "help", steps: one(exitOK, "help")},
		{name: "unknown_command", steps: one(exitUsage, "frobnicate")},
		{name: "bad_global_flag", steps: one(exitUsage, "--colour", "tools")},
		{name: "missing_workspace", steps: one(exitUsage, "-C", "no/such/dir", "tools")},
		{name: "bad_depth", steps: []step{{args: []string{"tools"}, env: []string{"BASIS_SPAWN_DEPTH=deep"}, want: exitUsage}}},
		{name: "version", steps: one(exitOK, "version")},

		// tools
		{name: "tools", steps: one(exitOK, "tools")},
		{name: "tools_json", steps: one(exitOK, "tools", "--json")},
		{name: "tools_help", steps: one(exitOK, "tools", "--help")},
		{name: "tools_extra_argument", steps: one(exitUsage, "tools", "extra")},
		{name: "tools_unknown_flag", steps: one(exitUsage, "tools", "--all")},
		{name: "tools_broken_manifest", setup: brokenManifest, steps: one(exitUsage, "tools")},
		{name: "tools_global_manifest", setup: globalManifest, steps: one(exitOK, "tools")},
		// One tool whose ${VAR} is unset breaks only itself.
		// One line each, saying what to do.
		{name: "serve_http_not_loopback", mcp: true, steps: []step{
			{args: []string{"serve", "--http", "0.0.0.0:8123"}, want: exitUsage},
			{args: []string{"serve", "--http", "nonsense"}, want: exitUsage},
		}},
		{name: "call_hook_missing", steps: one(exitRefused, "call", "deploy", `{"service": "api"}`, "--approve", "hook:./no-such-hook --strict")},
		// Without a .basis/ basis says which directory it took, once.
		{name: "no_basis_dir", setup: noBasisDir, steps: []step{
			{args: []string{"check"}, want: exitOK},
			{args: []string{"-C", ".", "call", "spawn", `{"input": "!echo here"}`, "--approve", "allow"}, want: exitOK},
		}},
		// A tool whose program is missing says so in tools, as check does.
		{name: "tools_cannot_start", setup: missingProgramTool, steps: []step{
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"check"}, want: exitUsage},
		}},
		{name: "unavailable_tool", setup: unsetVariableTool, steps: []step{
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"call", "publish", `{}`, "--approve", "allow"}, want: exitRefused},
			{args: []string{"call", "greet", `{"name": "Ada"}`, "--approve", "allow"}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!echo still here"}`, "--approve", "allow"}, want: exitOK},
			{args: []string{"check"}, want: exitUsage},
		}},

		// check
		{name: "check", steps: one(exitOK, "check")},
		{name: "check_every_problem", setup: func(t *testing.T, ws, config string) {
			brokenManifest(t, ws, config)
			write(t, filepath.Join(ws, ".basis/rules.json"), `{"schema": 1, "rules": [{"tool": "greet", "allow": true}]}`)
			write(t, filepath.Join(config, "rules.json"), `{"schema": 1, "rules": [{"tool": "greet", "alow": true}]}`)
			write(t, filepath.Join(config, "tools.json"), `{"schema": 2, "tools": {}}`)
		}, steps: one(exitUsage, "check")},
		{name: "check_collision_with_spawn", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {"spawn": {
				"description": "A tool that wants to be spawn.", "input_schema": {"type": "object"}, "command": ["true"]}}}`)
		}, steps: one(exitUsage, "check")},

		// call: success, and the ways of passing input and flags
		{name: "call_ok", steps: one(exitOK, "call", "greet", `{"name": "Ada"}`, "--approve", "allow")},
		{name: "call_flags_first", steps: one(exitOK, "call", "--approve", "allow", "greet", `{"name": "Ada"}`)},
		{name: "call_input_file", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, "input.json"), `{"name": "Grace"}`)
		}, steps: one(exitOK, "call", "greet", "@input.json", "--approve=allow")},
		{name: "call_input_stdin", steps: []step{{args: []string{"call", "greet", "-", "--approve", "allow"}, stdin: `{"name": "Linus"}`, want: exitOK}}},
		{name: "call_help", steps: one(exitOK, "call", "--help")},
		// call: refusals
		{name: "call_invalid_input", steps: one(exitRefused, "call", "greet", `{"name": 42, "age": 3}`, "--approve", "allow")},
		{name: "call_not_json", steps: one(exitRefused, "call", "greet", `{"name": `, "--approve", "allow")},
		{name: "call_unknown_tool", steps: one(exitRefused, "call", "gret", `{}`, "--approve", "allow")},
		{name: "call_denied", steps: one(exitRefused, "call", "deploy", `{"service": "api"}`, "--approve", "deny")},
		{name: "call_nobody_to_ask", steps: []step{
			{args: []string{"call", "deploy", `{"service": "api"}`}, want: exitRefused},
			// Every rule "always" would save, exact for rm.
			{args: []string{"call", "spawn", `{"input": "!go test ./... && rm -f README.md"}`}, want: exitRefused},
		}},
		{name: "call_no_terminal_to_prompt", steps: one(exitRefused, "call", "deploy", `{"service": "api"}`, "--approve", "prompt")},
		{name: "call_workspace_deny_rule", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".basis/rules.json"), `{"schema": 1, "rules": [{"tool": "deploy", "allow": false, "reason": "deploys go through the release train"}]}`)
		}, steps: one(exitRefused, "call", "deploy", `{"service": "api"}`, "--approve", "allow")},
		// call: failures and configuration errors
		{name: "call_tool_fails", steps: one(exitFailed, "call", "fail", "--approve", "allow")},
		{name: "call_bad_approve", steps: one(exitUsage, "call", "greet", `{"name": "x"}`, "--approve", "maybe")},
		{name: "call_no_name", steps: one(exitUsage, "call")},
		{name: "call_too_many_arguments", steps: one(exitUsage, "call", "greet", "{}", "{}")},
		{name: "call_missing_input_file", steps: one(exitUsage, "call", "greet", "@nope.json", "--approve", "allow")},
		{name: "call_workspace_allow_rule", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".basis/rules.json"), `{"schema": 1, "rules": [{"tool": "deploy", "allow": true}]}`)
		}, steps: one(exitUsage, "call", "deploy", `{"service": "api"}`)},
		// call: spawn
		{name: "spawn_command_allowed_by_rule", steps: []step{
			{args: []string{"rules", "add", "--tool", "spawn", "--command", "cat *", "--allow"}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt"}`}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt | sh"}`}, want: exitRefused},
		}},
		{name: "spawn_no_shell", steps: one(exitRefused, "--no-shell", "call", "spawn", `{"input": "!ls"}`, "--approve", "allow")},
		{name: "spawn_task_without_delegate", steps: one(exitRefused, "call", "spawn", `{"input": "summarise the notes"}`, "--approve", "allow")},
		{name: "spawn_task_delegated", steps: []step{
			{args: []string{"--delegate", delegate, "call", "spawn", `{"input": "summarise the notes"}`, "--approve", "allow"}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "summarise the notes"}`, "--approve", "allow"}, env: []string{"BASIS_DELEGATE=" + delegate, "BASIS_SPAWN_DEPTH=1"}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "summarise the notes"}`, "--approve", "allow"}, env: []string{"BASIS_DELEGATE=" + delegate, "BASIS_SPAWN_DEPTH=2"}, want: exitRefused},
		}},

		// Mistakes people make, answered in their words.
		{name: "unknown_command_did_you_mean", steps: one(exitUsage, "tols")},
		{name: "global_flag_after_command", steps: one(exitUsage, "call", "greet", `{"name": "Ada"}`, "--delegate", "x")},
		{name: "call_misspelled_flag", steps: one(exitUsage, "call", "greet", `{"name": "Ada"}`, "--aprove", "allow")},
		{name: "call_flag_without_value", steps: one(exitUsage, "call", "greet", `{"name": "Ada"}`, "--approve")},
		{name: "tools_json_bad_value", steps: one(exitUsage, "tools", "--json=maybe")},
		{name: "rules_unknown_subcommand_did_you_mean", steps: one(exitUsage, "rules", "lsit")},

		// call --json: one object for hosts that shell out to basis.
		{name: "call_json", steps: []step{
			{args: []string{"call", "greet", `{"name": "Ada"}`, "--approve", "allow", "--json"}, want: exitOK},
			{args: []string{"call", "fail", "--approve", "allow", "--json"}, want: exitFailed},
			{args: []string{"call", "greet", `{"name": 42}`, "--json"}, want: exitRefused},
			{args: []string{"call", "deploy", `{"service": "api"}`, "--approve", "deny", "--json"}, want: exitRefused},
		}},

		// --approve hook:ARGV, split into words but never run by a shell.
		{name: "call_hook", steps: []step{
			{args: []string{"call", "deploy", `{"service": "api"}`, "--approve", "hook:" + approveHook + " allow"}, want: exitOK},
			{args: []string{"call", "deploy", `{"service": "api"}`, "--approve", "hook:" + approveHook + " deny 'not on Fridays'"}, want: exitRefused},
			{args: []string{"call", "deploy", `{"service": "api"}`, "--approve", "hook:approve.sh allow $DEPLOY_TOKEN"}, want: exitUsage},
			{args: []string{"call", "deploy", `{"service": "api"}`, "--approve", "hook:"}, want: exitUsage},
		}},
		{name: "delegate_argv", steps: []step{
			{args: []string{"--delegate", delegate + " 'two words'", "call", "spawn", `{"input": "summarise the notes"}`, "--approve", "allow"}, want: exitOK},
			{args: []string{"--delegate", "$HOME/agent", "tools"}, want: exitUsage},
			{args: []string{"tools"}, env: []string{"BASIS_DELEGATE=agent; rm -rf /"}, want: exitUsage},
		}},

		// On a terminal, progress is one line erased before the result;
		// every line is printed once.
		{name: "progress_on_terminal", steps: []step{
			{args: []string{"call", "greet", `{"name": "Ada"}`, "--approve", "allow"}, terminal: 80, want: exitOK},
			{args: []string{"call", "fail", "--approve", "allow"}, terminal: 80, want: exitFailed},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt"}`, "--approve", "allow"}, terminal: 16, want: exitOK},
		}},

		// Finding the workspace.
		{name: "from_a_subdirectory", steps: []step{
			{args: []string{"tools"}, dir: "data", want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt"}`, "--approve", "allow"}, dir: "data", want: exitOK},
		}},
		{name: "foreign_workspace", setup: foreignBasis, steps: []step{
			{args: []string{"tools"}, dir: "data", want: exitUsage},
			{args: []string{"-C", "..", "tools"}, dir: "data", want: exitOK},
			{args: []string{"check"}, env: []string{"BASIS_SAFE_DIRECTORIES=/elsewhere:*"}, want: exitOK},
		}},

		// init
		{name: "init", setup: func(t *testing.T, ws, _ string) {
			if err := os.Mkdir(filepath.Join(ws, "fresh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, steps: []step{
			{args: []string{"init"}, dir: "fresh", want: exitOK},
			{args: []string{"tools"}, dir: "fresh", want: exitOK},
			{args: []string{"check"}, dir: "fresh", want: exitOK},
			{args: []string{"call", "word_count", `{"path": ".basis/tools.json"}`, "--approve", "allow"}, dir: "fresh", want: exitOK},
			{args: []string{"call", "word_count", `{"path": "../data/words.txt"}`, "--approve", "allow"}, dir: "fresh", want: exitFailed},
			{args: []string{"init"}, dir: "fresh", want: exitUsage},
			{args: []string{"-C", "fresh", "init"}, want: exitUsage},
		}},

		// rules
		{name: "rules_lifecycle", steps: []step{
			{args: []string{"rules", "list"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "deploy", "--deny", "--reason", "not on Fridays"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "spawn", "--command", "go test *", "--allow"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "greet", "--pattern", `*"name":"Ada"*`, "--allow"}, want: exitOK},
			{args: []string{"rules", "list"}, want: exitOK},
			{args: []string{"rules", "remove", "2"}, want: exitOK},
			{args: []string{"rules", "remove", "--tool", "deploy", "--deny"}, want: exitOK},
			{args: []string{"rules", "list"}, want: exitOK},
			{args: []string{"rules", "remove", "7"}, want: exitUsage},
			{args: []string{"rules", "remove", "--tool", "nothing"}, want: exitUsage},
		}},
		// Issue: an allow written in one repository ran another
		// repository's tool of the same name. Rules are bound to sources.
		{name: "rules_bound_to_source", setup: otherRepo, steps: []step{
			{args: []string{"rules", "add", "--tool", "greet", "--allow"}, want: exitOK},
			{args: []string{"call", "greet", `{"name": "Ada"}`, "--approve", "deny"}, want: exitOK},
			{args: []string{"-C", "other", "call", "greet", `{"name": "Ada"}`, "--approve", "deny"}, want: exitRefused},
			{args: []string{"rules", "add", "--tool", "greet", "--allow"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "gret", "--allow"}, want: exitUsage},
			{args: []string{"rules", "add", "--tool", "greet", "--any-source", "--deny", "--reason", "no greeting anywhere"}, want: exitOK},
			{args: []string{"-C", "other", "call", "greet", `{"name": "Ada"}`, "--approve", "allow"}, want: exitRefused},
			{args: []string{"rules", "list"}, want: exitOK},
			{args: []string{"rules", "remove", "--tool", "greet"}, want: exitOK},
		}},
		{name: "rules_ask_alternatives_examples", steps: []step{
			{args: []string{"rules", "add", "--tool", "spawn", "--command", "echo *", "--allow"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "spawn", "--command", "echo {secret,token} *", "--ask", "--match", "echo token x", "--not-match", "echo hi"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "spawn", "--command", "echo *", "--deny", "--match", "ls"}, want: exitUsage},
			{args: []string{"call", "spawn", `{"input": "!echo hi"}`, "--approve", "deny"}, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!echo token x"}`, "--approve", "deny"}, want: exitRefused},
			{args: []string{"rules", "remove", "--tool", "spawn", "--ask"}, want: exitOK},
			{args: []string{"rules", "list"}, want: exitOK},
		}},
		// A read-only tool runs unasked, held by the kernel: a write is
		// refused, and the failure says which sandbox refused it; the
		// operator's ask_read_only has it asked again.
		{name: "read_only_tool", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".basis", "tools.json"), `{"schema": 1, "tools": {
				"look": {"description": "Reads the README.", "input_schema": {"type": "object"}, "command": ["/bin/cat", "README.md"], "sandbox": "read-only"},
				"scribble": {"description": "Tries to write.", "input_schema": {"type": "object"}, "command": ["/bin/sh", "-c", "echo x > out.txt"], "sandbox": "read-only"}}}`)
			write(t, filepath.Join(ws, "README.md"), "read me\n")
		}, steps: []step{
			{args: []string{"tools"}, want: exitOK},
			{args: []string{"call", "look", "{}"}, want: exitOK},
			{args: []string{"explain", "scribble", "{}"}, want: exitOK},
			{args: []string{"call", "scribble", "{}"}, want: exitFailed},
			{args: []string{"call", "look", "{}"}, want: exitRefused, before: &edit{
				note: "the operator asks about read-only calls too",
				do: func(t *testing.T, _, config string) {
					write(t, filepath.Join(config, "rules.json"), `{"schema": 2, "ask_read_only": true, "rules": []}`)
				}}},
		}},
		{name: "explain", steps: []step{
			{args: []string{"explain", "greet", `{"name": "Ada"}`}, want: exitRefused},
			{args: []string{"rules", "add", "--tool", "greet", "--pattern", `*"name":"Ada"*`, "--allow"}, want: exitOK},
			{args: []string{"explain", "greet", `{"name": "Ada"}`}, want: exitOK},
			{args: []string{"explain", "spawn", `{"input": "!go test ./... | tail -1"}`}, want: exitRefused},
			{args: []string{"explain", "spawn", `{"input": "!ls $(pwd)"}`}, want: exitRefused},
			{args: []string{"explain", "greet", `{"name": 7}`}, want: exitRefused},
		}},
		// What explain shows comes from the input, a manifest and rules
		// files: escaped, so a bidirectional control or an escape
		// sequence cannot change how it reads.
		{name: "explain_escapes_what_it_shows", steps: []step{
			{args: []string{"explain", "spawn", `{"input": "!echo \u202e\u2066x\u2069 \u200b\u200e\u200f\ufeff \u001b[2K\u001b[1A done"}`}, want: exitRefused},
			{args: []string{"explain", "greet", `{"name": "Ada\u202e\u001b[1A"}`}, want: exitRefused},
		}},
		{name: "system_rules_beat_the_operator", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, "etc-basis", "rules.json"), `{"schema": 2, "rules": [{"tool": "greet", "decision": "deny", "reason": "the administrator says no"}]}`)
		}, steps: []step{
			{args: []string{"rules", "add", "--tool", "greet", "--allow"}, env: []string{"BASIS_SYSTEM_CONFIG_DIR=etc-basis"}, want: exitOK},
			{args: []string{"call", "greet", `{"name": "Ada"}`, "--approve", "allow"}, env: []string{"BASIS_SYSTEM_CONFIG_DIR=etc-basis"}, want: exitRefused},
			{args: []string{"rules", "list"}, env: []string{"BASIS_SYSTEM_CONFIG_DIR=etc-basis"}, want: exitOK},
		}},
		{name: "rules_list_with_workspace_rules", setup: func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".basis/rules.json"), `{"schema": 1, "rules": [{"tool": "deploy", "allow": false, "reason": "use the release train"}]}`)
		}, steps: one(exitOK, "rules", "list")},
		{name: "rules_usage_errors", steps: []step{
			{args: []string{"rules"}, want: exitUsage},
			{args: []string{"rules", "purge"}, want: exitUsage},
			{args: []string{"rules", "add", "--allow"}, want: exitUsage},
			{args: []string{"rules", "add", "--tool", "x"}, want: exitUsage},
			{args: []string{"rules", "add", "--tool", "x", "--allow", "--deny"}, want: exitUsage},
			{args: []string{"rules", "add", "--tool", "x", "--allow", "--pattern", "*", "--command", "ls"}, want: exitUsage},
			{args: []string{"rules", "add", "--tool", "bad name", "--allow"}, want: exitUsage},
			{args: []string{"rules", "remove"}, want: exitUsage},
			{args: []string{"rules", "remove", "first"}, want: exitUsage},
			{args: []string{"rules", "--config-dir", "/elsewhere", "list"}, want: exitUsage},
			{args: []string{"rules", "--help"}, want: exitOK},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mcp && !mcpInBuild {
				t.Skip("needs MCP, which a -tags nomcp build leaves out")
			}
			runCase(t, tc)
		})
	}
}

// runCase runs the steps and compares the transcript with the golden file.
func runCase(t *testing.T, tc cliCase) {
	ws := copyWorkspace(t)
	// The config directory is the default one, under a HOME of the case's
	// own, so paths print the same (~/.config/basis) on every run.
	home := t.TempDir()
	config := filepath.Join(home, ".config", "basis")
	if tc.setup != nil {
		tc.setup(t, ws, config)
	}
	var transcript strings.Builder
	for _, s := range tc.steps {
		if s.before != nil {
			s.before.do(t, ws, config)
			fmt.Fprintf(&transcript, "# %s\n\n", s.before.note)
		}
		var stdout, stderr bytes.Buffer
		cwd := filepath.Join(ws, s.dir)
		width := s.terminal
		e := &env{
			stdin:  strings.NewReader(s.stdin),
			stdout: &stdout,
			stderr: &stderr,
			environ: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "DEPLOY_TOKEN=" + canary,
				"TESTDATA=" + testdata}, s.env...),
			getwd:         func() (string, error) { return cwd, nil },
			interactive:   func() bool { return false },
			progressWidth: func() int { return width },
			tty:           filepath.Join(t.TempDir(), "no-tty"),
		}
		// Relative paths in arguments (@input.json) are the user's, taken
		// from the process's directory.
		t.Chdir(cwd)
		// $WORK in an argument is the workspace, as the transcript shows
		// it.
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = strings.ReplaceAll(a, "$WORK", ws)
		}
		code := run(context.Background(), args, e)
		fmt.Fprintf(&transcript, "$ basis %s\nexit: %d\n", shellJoin(s.args), code)
		if s.dir != "" {
			fmt.Fprintf(&transcript, "(in %s)\n", s.dir)
		}
		fmt.Fprintf(&transcript, "-- stdout --\n%s-- stderr --\n%s\n", stdout.String(), stderr.String())
		if code != s.want {
			t.Errorf("basis %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", shellJoin(s.args), code, s.want, stdout.String(), stderr.String())
		}
	}
	got := normalize(transcript.String(), ws, home)
	// Checked before the golden file is compared or written: a transcript
	// that shows the credential fails, with or without -update.
	if strings.Contains(got, canary) {
		t.Fatalf("the transcript shows the planted credential %q; nothing basis prints may hold a secret:\n%s", canary, got)
	}
	golden := filepath.Join(testdata, "golden", tc.name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("transcript differs from %s (-want +got):\n%s", golden, diff)
	}
}

// testdata is the absolute path of this package's testdata: cases change
// directory into their workspace.
var testdata = func() string {
	p, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return p
}()

var (
	goVersion    = regexp.MustCompile(`go1\.[0-9.]+[a-z0-9]*`)
	callID       = regexp.MustCompile(`^cli-[0-9a-f]{16}$`)
	anyCallID    = regexp.MustCompile(`cli-[0-9a-f]{16}`)
	durationMS   = regexp.MustCompile(`"duration_ms":[0-9.e+-]+`)
	sandboxCache = regexp.MustCompile(`\$CACHE/basis/sandbox/[A-Za-z0-9._-]+`)
	// A rule's digest hashes its definition, which holds the case's
	// temporary paths.
	ruleDigest = regexp.MustCompile(`"digest": "sha256:[0-9a-f]{64}"`)
	// How the sandbox cuts the network depends on the machine: a network
	// namespace where one can be made, else Landlock. Both are shown as
	// $NETCUT: in a description's JSON, in a change to it, and in its
	// summary. A machine that can cut neither still shows "unavailable":
	// its runs fail, and the transcripts with them.
	readList     = regexp.MustCompile(`"read":\[[^\]]*\]`)
	netCutJSON   = regexp.MustCompile(`("network_cut": ?)"(?:namespace|landlock-tcp)"`)
	netCutChange = regexp.MustCompile(`(network_cut (?:added:|removed \(was|was)) "(?:namespace|landlock-tcp)"`)
	netCutWords  = func() *strings.Replacer {
		var pairs []string
		for _, cut := range []sandbox.NetworkCut{sandbox.CutNamespace, sandbox.CutLandlockTCP} {
			summary := sandbox.Description{Mode: sandbox.WorkspaceWrite, Network: "none", NetworkCut: cut}.Summary()
			_, words, ok := strings.Cut(summary, "; no network")
			if !ok {
				panic("a sandbox summary without its network: " + summary)
			}
			pairs = append(pairs, "; no network"+words, "; no network ($NETCUT)")
		}
		return strings.NewReplacer(pairs...)
	}()
)

// The transcripts are the same whichever way this machine cuts the
// network.
func TestNormalizeHidesTheNetworkCut(t *testing.T) {
	for _, cut := range []sandbox.NetworkCut{sandbox.CutNamespace, sandbox.CutLandlockTCP} {
		t.Run(string(cut), func(t *testing.T) {
			d := sandbox.Description{Mode: sandbox.WorkspaceWrite, Network: "none", NetworkCut: cut, Write: []string{"/w"}}
			compact, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			indented, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			tests := []struct{ in, want string }{
				{string(compact), `{"mode":"workspace-write","network":"none","network_cut":"$NETCUT","write":["/w"]}`},
				{string(indented), "{\n  \"mode\": \"workspace-write\",\n  \"network\": \"none\",\n  \"network_cut\": \"$NETCUT\",\n  \"write\": [\n    \"/w\"\n  ]\n}"},
				{"would: run x; " + d.Summary(), "would: run x; sandbox workspace-write: writes only to /w; no network ($NETCUT)"},
				{`sandbox network_cut removed (was "` + string(cut) + `"); side_effect was "process"`, `sandbox network_cut removed (was "$NETCUT"); side_effect was "process"`},
				{`sandbox network_cut added: "` + string(cut) + `"`, `sandbox network_cut added: "$NETCUT"`},
				// A cut that is no cut is not hidden: runs fail there.
				{`"network_cut":"unavailable"`, `"network_cut":"unavailable"`},
				// Only the network cut's value is hidden.
				{`"name":"namespace"`, `"name":"namespace"`},
			}
			for _, tt := range tests {
				if diff := cmp.Diff(tt.want, normalize(tt.in, "/nonexistent/ws", "/nonexistent/home")); diff != "" {
					t.Errorf("normalize(%q) (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
}

// normalize replaces what differs between runs and machines: temporary
// paths, the Go version, call ids, durations, rules' digests, how the
// sandbox cuts the network; and shows the terminal's erase-line
// sequence as <erase>.
func normalize(s, ws, home string) string {
	s = strings.ReplaceAll(s, ws, "$WORK")
	s = strings.ReplaceAll(s, home, "$HOME")
	s = strings.ReplaceAll(s, testdata, "$TESTDATA")
	// The sandbox lets programs write to a cache of their own for the
	// workspace, named after its (temporary) path.
	if cache, err := os.UserCacheDir(); err == nil {
		s = strings.ReplaceAll(s, cache, "$CACHE")
	}
	s = sandboxCache.ReplaceAllString(s, "$$CACHE/basis/sandbox/$$WORKSPACE")
	s = anyCallID.ReplaceAllString(s, "cli-$$CALLID")
	s = durationMS.ReplaceAllString(s, `"duration_ms":$$MS`)
	s = ruleDigest.ReplaceAllString(s, `"digest": "sha256:$$DIGEST"`)
	s = netCutJSON.ReplaceAllString(s, `$1"$$NETCUT"`)
	// The system directories a read-only tool reads are this machine's.
	s = readList.ReplaceAllStringFunc(s, func(list string) string {
		var kept []string
		for _, r := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(list, `"read":[`), "]"), ",") {
			if !strings.HasPrefix(r, `"/`) {
				kept = append(kept, r)
			}
		}
		return `"read":[` + strings.Join(append(kept, `$SYSTEMDIRS`), ",") + "]"
	})
	s = netCutChange.ReplaceAllString(s, `$1 "$$NETCUT"`)
	s = netCutWords.Replace(s)
	s = strings.ReplaceAll(s, eraseLine, "<erase>")
	return goVersion.ReplaceAllString(s, "$$GOVERSION")
}

func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'{}*$|&;<>()!\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// copyWorkspace copies testdata/workspace to a temporary directory, keeping
// file modes, so every case starts from the same files.
func copyWorkspace(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(testdata, "workspace")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// brokenManifest makes the workspace's manifest wrong in several ways at
// once, with a value that must never be printed.
func brokenManifest(t *testing.T, ws, _ string) {
	write(t, filepath.Join(ws, ".basis/tools.json"), `{
  "schema": 1,
  "tools": {
    "deploy": {
      "description": "Deploy.",
      "input_schema": {"type": "object"},
      "command": ["./deploy.sh", "${UNSET_SECRET_VAR}"],
      "timout_ms": 5000
    },
    "lint": {
      "input_schema": {"type": "array"},
      "command": []
    }
  }
}`)
}

func unsetVariableTool(t *testing.T, ws, _ string) {
	write(t, filepath.Join(ws, ".basis/tools.json"), `{
  "schema": 1,
  "tools": {
    "publish": {
      "description": "Publish a release.",
      "input_schema": {"type": "object"},
      "command": ["true"],
      "env": {"GITHUB_TOKEN": "${UNSET_GITHUB_TOKEN}"}
    },
    "greet": {
      "description": "Greet somebody by name.",
      "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
      "command": ["echo", "hello"]
    }
  }
}`)
}

// noBasisDir leaves the workspace without its .basis directory.
func noBasisDir(t *testing.T, ws, _ string) {
	if err := os.RemoveAll(filepath.Join(ws, ".basis")); err != nil {
		t.Fatal(err)
	}
}

// missingProgramTool declares a tool whose program is not there.
func missingProgramTool(t *testing.T, ws, _ string) {
	write(t, filepath.Join(ws, ".basis/tools.json"), `{
  "schema": 1,
  "tools": {
    "nope": {
      "description": "Runs a program nobody built.",
      "input_schema": {"type": "object"},
      "command": ["./.basis/bin/nope"]
    }
  }
}`)
}

// otherRepo is a second repository inside the workspace directory, with a
// tool of the same name as one of the workspace's.
func otherRepo(t *testing.T, ws, _ string) {
	write(t, filepath.Join(ws, "other", ".basis", "tools.json"), `{"schema": 1, "tools": {
		"greet": {"description": "Another repository's greet.", "input_schema": {"type": "object"}, "command": ["echo", "not the greet you allowed"]}
	}}`)
}

func globalManifest(t *testing.T, _, config string) {
	write(t, filepath.Join(config, "tools.json"), `{"schema": 1, "tools": {
		"greet": {"description": "A global greet, shadowed by the workspace's.", "input_schema": {"type": "object"}, "command": ["true"]},
		"weather": {"description": "A global tool.", "input_schema": {"type": "object"}, "command": ["true"], "side_effect": "external"}}}`)
}

// foreignBasis gives the workspace's .basis to another user, uid 4242: a
// shared checkout someone else controls. Only root can.
func foreignBasis(t *testing.T, ws, _ string) {
	if os.Getuid() != 0 {
		t.Skip("giving .basis to another user needs root")
	}
	if err := os.Chown(filepath.Join(ws, ".basis"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
}
