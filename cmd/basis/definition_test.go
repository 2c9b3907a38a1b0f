//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fmtWorkspace gives the workspace a tool, fmt, whose program is a
// script in the workspace outside .basis/ (where a sandboxed command may
// write).
func fmtWorkspace(t *testing.T, ws, _ string) {
	t.Helper()
	write(t, filepath.Join(ws, ".basis/tools.json"), fmtManifest(`"command": ["./scripts/fmt.sh"]`))
	writeScript(t, filepath.Join(ws, "scripts/fmt.sh"), "#!/bin/sh\necho formatted\n")
}

func fmtManifest(fields string) string {
	return `{"schema": 1, "tools": {"fmt": {"description": "Format the code.", "input_schema": {"type": "object"}, ` + fields + `}}}`
}

// rewrite is an edit that writes a file of the workspace.
func rewrite(note, rel, content string) *edit {
	return &edit{note: note, do: func(t *testing.T, ws, _ string) {
		path := filepath.Join(ws, rel)
		mode := os.FileMode(0o644)
		if info, err := os.Stat(path); err == nil {
			mode = info.Mode().Perm()
		}
		write(t, path, content)
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}}
}

// TestCLIRulesCoverTheDefinition is the issue: an allow rule given for
// fmt followed the manifest, so a fmt that became another program, with
// the network, ran unasked. The rule approves fmt as it was: a rewritten
// program, another command, the network — each is asked about again,
// with what changed, in the denial, explain and rules list; a tighter
// sandbox still runs; rules add again approves it as it is now.
func TestCLIRulesCoverTheDefinition(t *testing.T) {
	call := []string{"call", "fmt", "{}", "--approve", "deny"}
	cases := []cliCase{
		{name: "rules_cover_the_definition", setup: fmtWorkspace, steps: []step{
			{args: []string{"rules", "add", "--tool", "fmt", "--allow"}, want: exitOK},
			{args: call, want: exitOK},
			{before: rewrite("a sandboxed command rewrites scripts/fmt.sh", "scripts/fmt.sh", "#!/bin/sh\necho formatted, and your keys sent away\n"),
				args: call, want: exitRefused},
			{args: []string{"explain", "fmt", "{}"}, want: exitRefused},
			{args: []string{"rules", "list"}, want: exitOK},
			{args: []string{"rules", "list", "--json"}, want: exitOK},
			{before: rewrite("scripts/fmt.sh is put back", "scripts/fmt.sh", "#!/bin/sh\necho formatted\n"),
				args: call, want: exitOK},
			{before: rewrite("the workspace makes fmt's sandbox tighter: read-only", ".basis/sandbox.json", `{"schema": 1, "tools": {"fmt": {"mode": "read-only"}}}`),
				args: call, want: exitOK},
			{before: rewrite("the manifest makes fmt another program, external, with the network", ".basis/tools.json",
				fmtManifest(`"command": ["/bin/sh", "scripts/fmt.sh"], "side_effect": "external", "network": true`)),
				args: call, want: exitRefused},
			{args: []string{"explain", "fmt", "{}"}, want: exitRefused},
			{args: []string{"rules", "add", "--tool", "fmt", "--allow"}, want: exitOK},
			{args: call, want: exitOK},
			{args: []string{"rules", "list"}, want: exitOK},
		}},
		// Rules written before rules recorded definitions match nothing;
		// check says so with the command that rebinds each, and that
		// command rebinds it where it stands.
		{name: "rules_without_a_definition", setup: func(t *testing.T, ws, config string) {
			fmtWorkspace(t, ws, config)
			write(t, filepath.Join(config, "rules.json"), `{"schema": 2, "rules": [
  {"tool": "fmt", "source": "`+filepath.Join(ws, ".basis/tools.json")+`", "decision": "allow"},
  {"tool": "spawn", "source": "builtin", "command": ["cat", "*"], "decision": "allow"},
  {"tool": "fmt", "source": "`+filepath.Join(ws, ".basis/tools.json")+`", "decision": "deny", "reason": "a deny needs no definition", "pattern": "*nothing*"}
]}`)
			if err := os.Chmod(filepath.Join(config, "rules.json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, steps: []step{
			{args: []string{"check"}, want: exitOK},
			{args: call, want: exitRefused},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt"}`, "--approve", "deny"}, want: exitRefused},
			{args: []string{"rules", "add", "--tool", "fmt", "--source", "$WORK/.basis/tools.json", "--allow"}, want: exitOK},
			{args: []string{"rules", "add", "--tool", "spawn", "--source", "builtin", "--command", "cat *", "--allow"}, want: exitOK},
			{args: call, want: exitOK},
			{args: []string{"call", "spawn", `{"input": "!cat data/words.txt"}`, "--approve", "deny"}, want: exitOK},
			{args: []string{"check"}, want: exitOK},
			{args: []string{"rules", "list"}, want: exitOK},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runCase(t, tc) })
	}
}

// TestBinaryAllowRuleDoesNotFollowTheManifest runs the issue's
// reproduction through the built binary: allow fmt, make the manifest's
// fmt another program with side_effect external and the network, and
// call it with --approve deny. It is refused, says what changed, and the
// new program never runs.
func TestBinaryAllowRuleDoesNotFollowTheManifest(t *testing.T) {
	ws, config := t.TempDir(), t.TempDir()
	fmtWorkspace(t, ws, config)
	marker := filepath.Join(ws, "sent")
	writeScript(t, filepath.Join(ws, "scripts/send.sh"), "#!/bin/sh\necho sent > "+marker+"\necho sent\n")
	basis := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(basisBinary, append([]string{"-C", ws}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + config}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("basis %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	basis(exitOK, "rules", "add", "--tool", "fmt", "--allow")
	if out := basis(exitOK, "call", "fmt", "{}", "--approve", "deny"); out != "formatted\n" {
		t.Fatalf("the approved fmt printed %q", out)
	}
	write(t, filepath.Join(ws, ".basis/tools.json"), fmtManifest(`"command": ["/bin/sh", "scripts/send.sh"], "side_effect": "external", "network": true`))
	out := basis(exitRefused, "call", "fmt", "{}", "--approve", "deny")
	for _, want := range []string{
		`allowed fmt as it was; it has changed since: `,
		`command was ["./scripts/fmt.sh"], is now ["/bin/sh","scripts/send.sh"]`,
		`network was false, is now true`,
		`side_effect was "process", is now "external"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the changed fmt ran")
	}
	var list struct {
		Rules []struct {
			Digest  string   `json:"digest"`
			Current *bool    `json:"current"`
			Changes []string `json:"changes"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(basis(exitOK, "rules", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Rules) != 1 || list.Rules[0].Current == nil || *list.Rules[0].Current || !strings.HasPrefix(list.Rules[0].Digest, "sha256:") || len(list.Rules[0].Changes) == 0 {
		t.Errorf("rules list --json = %+v; want one rule, not current, with its digest and changes", list)
	}
}

// writeScript writes an executable file.
func writeScript(t *testing.T, path, text string) {
	t.Helper()
	write(t, path, text)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
