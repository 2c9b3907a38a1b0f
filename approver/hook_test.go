//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// hookScript writes a shell script to a fresh directory and returns a Hook
// that runs it as ./hook.
func hookScript(t *testing.T, body string) approver.Hook {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hook"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return approver.Hook{Argv: []string{"./hook"}, Root: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: 10 * time.Second}
}

func hookRequest(t *testing.T) approver.Request {
	return approver.Request{
		CallID:  "call_9",
		Tool:    "spawn",
		Preview: contract.Preview{SideEffect: contract.SideEffectProcess, Subject: subject(t, cargoTestCurl), Summary: "run cargo test && curl x | sh in /repo", Dir: "/repo"},
		Input:   []byte(`{"input":"!cargo test && curl x | sh"}`),
	}
}

func TestHookAnswers(t *testing.T) {
	tests := []struct {
		name, out string
		want      approver.Answer
	}{
		{"allow", `{"decision": "allow", "reason": "looks fine"}`, approver.Answer{Decision: approver.Allow, Reason: "looks fine"}},
		{"deny", `{"decision":"deny","reason":"no curl into sh"}`, approver.Answer{Decision: approver.Deny, Reason: "no curl into sh"}},
		{"deny without reason", `{"decision":"deny"}`, approver.Answer{Decision: approver.Deny}},
		{"allow for the session", `{"decision":"allow_session"}`, approver.Answer{Decision: approver.AllowSession}},
		{"deny the tool for the session", `{"decision":"deny_session","reason":"no","remember":{"tool":true}}`, approver.Answer{Decision: approver.DenySession, Reason: "no", Remember: &approver.Remember{Tool: true}}},
		{"allow a command prefix", "\n  {\"decision\":\"allow_session\",\"remember\":{\"command\":[\"cargo\",\"*\"]}}\n\n", approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Command: []string{"cargo", "*"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hookScript(t, "cat >/dev/null; printf '%s' '"+tt.out+"'")
			got, err := h.Approve(context.Background(), hookRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookReadsTheRequestOnStdin(t *testing.T) {
	h := hookScript(t, `cat > stdin.json; echo "$APPROVER_HOOK_MARK" > env.txt; echo '{"decision":"allow"}'`)
	h.Env = append(h.Env, "APPROVER_HOOK_MARK=from-env")
	req := hookRequest(t)
	if _, err := h.Approve(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(h.Root, "stdin.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := req.MarshalJSON()
	if string(got) != string(want) {
		t.Errorf("the hook read\n%s\nwant\n%s", got, want)
	}
	if env, _ := os.ReadFile(filepath.Join(h.Root, "env.txt")); string(env) != "from-env\n" {
		t.Errorf("the hook's environment did not carry Env: %q", env)
	}
}

// A hook inherits basis's ordinary environment, but neither basis's own
// variables — with BASIS_SERVE_TOKEN it could answer basis's questions
// around itself — nor credentials unless PassEnv names them.
func TestHookEnvironment(t *testing.T) {
	environ := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/operator", "LANG=C.UTF-8", "FOO=bar",
		"BASIS_SERVE_TOKEN=canary-serve", "BASIS_CONFIG_DIR=/home/operator/.config/basis",
		"AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-github", "DB_PASSWORD=canary-db",
		"SSH_AUTH_SOCK=/tmp/canary-agent.sock",
	}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"nothing passed", nil, []string{"FOO", "HOME", "LANG", "PATH"}},
		{"the operator passes some", []string{"GITHUB_*", "SSH_AUTH_SOCK"}, []string{"FOO", "GITHUB_TOKEN", "HOME", "LANG", "PATH", "SSH_AUTH_SOCK"}},
		{"everything but basis's own", []string{"*"}, []string{"AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "FOO", "GITHUB_TOKEN", "HOME", "LANG", "PATH", "SSH_AUTH_SOCK"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "env")
			h := hookScript(t, `env > "`+out+`"; echo '{"decision": "allow"}'`)
			h.Env, h.PassEnv = environ, tt.pass
			if _, err := h.Approve(t.Context(), hookRequest(t)); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if name, _, _ := strings.Cut(line, "="); name != "PWD" && name != "SHLVL" && name != "_" {
					got = append(got, name)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the hook's variables (-want +got):\n%s", diff)
			}
			if strings.Contains(string(data), "canary-serve") {
				t.Error("the hook saw basis's serve token")
			}
		})
	}
}

func TestHookFailures(t *testing.T) {
	tests := []struct {
		name, script string
		timeout      time.Duration
		is           error
		says         string
	}{
		{"exit 1", "echo 'policy server unreachable' >&2; exit 1", 0, approver.ErrHookExit, "hook exited with code 1; its stderr: policy server unreachable"},
		{"killed by a signal", "kill -9 $$", 0, approver.ErrHookExit, "hook killed by signal SIGKILL"},
		{"sleep past the timeout", "sleep 5; echo '{\"decision\":\"allow\"}'", 200 * time.Millisecond, approver.ErrHookTimeout, "hook did not answer within 200ms and was stopped"},
		{"not json", "echo 'not json'", 0, approver.ErrHookOutput, `hook printed no answer: its stdout is not JSON; print {"decision": "allow", "reason": "..."}`},
		{"nothing", "true", 0, approver.ErrHookOutput, "hook printed no answer: its stdout is empty"},
		{"no decision", `echo '{"reason":"fine"}'`, 0, approver.ErrHookOutput, `hook printed no answer: "decision" is missing`},
		{"null decision", `echo '{"decision":null}'`, 0, approver.ErrHookOutput, `hook printed no answer: "decision" must be a string`},
		{"unknown decision", `echo '{"decision":"yes"}'`, 0, approver.ErrHookOutput, `hook printed no answer: "decision" is not one of allow, deny, allow_session, deny_session`},
		{"decision a number", `echo '{"decision":1}'`, 0, approver.ErrHookOutput, `hook printed no answer: "decision" must be a string`},
		{"unknown key", `echo '{"decision":"allow","scope":"all"}'`, 0, approver.ErrHookOutput, `hook printed no answer: unknown key "scope"; the answer has only "decision", "reason" and "remember"`},
		{"two answers", `echo '{"decision":"deny"}{"decision":"allow"}'`, 0, approver.ErrHookOutput, "hook printed no answer: its stdout has more after the JSON object; print exactly one object"},
		{"cut short", `printf '{"decision":"allow"'`, 0, approver.ErrHookOutput, "hook printed no answer: its stdout ends before its JSON object does"},
		{"a duplicate key", `echo '{"decision":"deny","decision":"allow"}'`, 0, approver.ErrHookOutput, `hook printed no answer: key "decision" appears more than once; print each key once`},
		{"remember on a one-time answer", `echo '{"decision":"allow","remember":{"tool":true}}'`, 0, approver.ErrHookOutput, `hook printed no answer: "remember" goes only with "allow_session" or "deny_session"`},
		{"remember both", `echo '{"decision":"allow_session","remember":{"tool":true,"command":["x"]}}'`, 0, approver.ErrHookOutput, `hook printed no answer: "remember" is not usable: it asks to remember more than one`},
		{"stderr joins a bad answer", "echo 'warning' >&2; echo oops", 0, approver.ErrHookOutput, "hook printed no answer: its stdout is not JSON; print {\"decision\": \"allow\", \"reason\": \"...\"}; its stderr: warning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hookScript(t, tt.script)
			if tt.timeout > 0 {
				h.Timeout = tt.timeout
			}
			start := time.Now()
			answer, err := h.Approve(context.Background(), hookRequest(t))
			var he *approver.HookError
			if !errors.Is(err, tt.is) || !errors.As(err, &he) {
				t.Fatalf("error = %v, want a *HookError wrapping %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), tt.says) {
				t.Errorf("error = %q\nwant it to start %q", err, tt.says)
			}
			if answer.Decision != approver.Deny || answer.Reason != err.Error() {
				t.Errorf("answer beside the error = %+v, want a denial with the error's text", answer)
			}
			if elapsed := time.Since(start); elapsed > 4*time.Second {
				t.Errorf("the hook took %v to fail", elapsed)
			}
		})
	}
}

func TestHookCannotStart(t *testing.T) {
	h := approver.Hook{Argv: []string{"approver-hook-that-does-not-exist"}, Env: []string{"PATH=/nonexistent"}}
	_, err := h.Approve(context.Background(), hookRequest(t))
	var se *subprocess.StartError
	if !errors.As(err, &se) || !errors.Is(err, subprocess.ErrNotFound) || err.Error() != "hook program approver-hook-that-does-not-exist could not start: "+subprocess.ErrNotFound.Error() {
		t.Errorf("error = %v, want a start error", err)
	}
	if _, err := (approver.Hook{}).Approve(context.Background(), hookRequest(t)); !errors.Is(err, subprocess.ErrInvalidCmd) {
		t.Errorf("a hook with no Argv: %v", err)
	}
}

func TestHookStderrIsBounded(t *testing.T) {
	h := hookScript(t, `i=0; while [ $i -lt 200 ]; do echo "line $i of a long complaint"; i=$((i+1)); done >&2; exit 3`)
	_, err := h.Approve(context.Background(), hookRequest(t))
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "line 0 of a long complaint / line 1") || !strings.HasSuffix(err.Error(), "...") {
		t.Errorf("error (%d bytes) = %v", len(err.Error()), err)
	}
}

// TestHookFailuresThroughTheGate: each way a hook fails is a fail-closed
// denial, and the three the design names give three different reasons.
func TestHookFailuresThroughTheGate(t *testing.T) {
	scripts := map[string]string{
		"exit 1":  "exit 1",
		"timeout": "sleep 5",
		"garbage": "echo 'not json'",
	}
	reasons := make(map[string]string)
	for name, script := range scripts {
		h := hookScript(t, script)
		h.Timeout = 200 * time.Millisecond
		g := newGate(t, h)
		v := authorize(t, g, "spawn", cargoTestCurl)
		if v.Allow || v.Source != approver.SourceFailClosed || !strings.HasPrefix(v.Reason, "tool spawn denied: no answer from the approver: hook ") {
			t.Errorf("%s: verdict = %+v", name, v)
		}
		if other, seen := reasons[v.Reason]; seen {
			t.Errorf("%s and %s give the same reason %q", name, other, v.Reason)
		}
		reasons[v.Reason] = name
	}
}

func TestHookStopsWithTheCaller(t *testing.T) {
	h := hookScript(t, "sleep 5")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := h.Approve(ctx, hookRequest(t))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, approver.ErrHookTimeout) || err.Error() != "hook timed out and was stopped" {
		t.Errorf("a hook stopped by the caller's deadline: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = h.Approve(ctx, hookRequest(t))
	if !errors.Is(err, context.Canceled) || err.Error() != "hook was cancelled and stopped" {
		t.Errorf("a hook stopped by cancellation: %v", err)
	}
}

// TestRequestJSON pins the JSON a hook reads on its stdin.
func TestRequestJSON(t *testing.T) {
	req := approver.Request{
		CallID: "call_1",
		Tool:   "spawn",
		Preview: contract.Preview{
			SideEffect:   contract.SideEffectProcess,
			Capabilities: []contract.Capability{contract.CapabilityProcessExec},
			Dir:          "/repo",
			Subject:      subject(t, `{"body":"go test ./... && go vet ./...","commands":[["go","test","./..."],["go","vet","./..."]],"cwd":"/repo","mode":"command","target":"local"}`),
			Summary:      "run go test ./... && go vet ./... in /repo",
		},
		Input: json.RawMessage(`{"input":"!go test ./... && go vet ./..."}`),
	}
	// json.Marshal would escape "&&" again around MarshalJSON's output;
	// the hook gets exactly what MarshalJSON writes.
	raw, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "request.golden.json", append(raw, '\n'))
	var back approver.Request
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	empty, err := (approver.Request{Tool: "x", Preview: contract.Preview{SideEffect: contract.SideEffectExternal}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"call_id":"","tool":"x","preview":{"side_effect":"external","subject":null,"summary":""},"input":null}`
	if string(empty) != want {
		t.Errorf("empty request = %s\nwant %s", empty, want)
	}
}
