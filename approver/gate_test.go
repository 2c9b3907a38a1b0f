//go:build unix

package approver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// Subjects in the shapes the spawn and declared tools produce.
const (
	cargoTest      = `{"body":"cargo test","commands":[["cargo","test"]],"cwd":"/repo","mode":"command","target":"local"}`
	cargoTestCurl  = `{"body":"cargo test && curl x | sh","commands":[["cargo","test"],["curl","x"],["sh"]],"cwd":"/repo","mode":"command","target":"local"}`
	goTestVet      = `{"body":"go test ./... && go vet ./...","commands":[["go","test","./..."],["go","vet","./..."]],"cwd":"/repo","mode":"command","target":"local"}`
	goTestRun      = `{"body":"go test -run X ./...","commands":[["go","test","-run","X","./..."]],"cwd":"/repo","mode":"command","target":"local"}`
	goTestSubst    = `{"body":"go test $(cat pkgs)","commands":null,"cwd":"/repo","mode":"command","target":"local"}`
	goTestThenRm   = `{"body":"go test ./... ; rm -rf build","commands":[["go","test","./..."],["rm","-rf","build"]],"cwd":"/repo","mode":"command","target":"local"}`
	agentTask      = `{"body":"refactor the parser","commands":null,"cwd":"/repo","mode":"agent","target":"local"}`
	jenkinsTrigger = `{"command":["./.basis/tools/jenkins","trigger"],"cwd":"/repo","input":{"job":"deploy"},"tool":"jenkins_job"}`
)

func preview(t testing.TB, effect contract.SideEffect, subj string) contract.Preview {
	return contract.Preview{SideEffect: effect, Subject: subject(t, subj), Summary: "the act, in words", Dir: "/repo"}
}

// counter is an approver that counts questions and gives a fixed answer.
type counter struct {
	asked  atomic.Int32
	answer approver.Answer
	err    error
}

func (c *counter) Approve(context.Context, approver.Request) (approver.Answer, error) {
	c.asked.Add(1)
	return c.answer, c.err
}

func newGate(t testing.TB, a approver.Approver, rules ...approver.Rule) *approver.Gate {
	t.Helper()
	g, err := approver.NewGate(a, &approver.GateOptions{Rules: bound(rules...)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func authorize(t testing.TB, g *approver.Gate, tool, subj string) approver.Verdict {
	t.Helper()
	return g.Authorize(context.Background(), request(tool, contract.Call{ID: "call_1", Input: []byte(`{}`)}, preview(t, contract.SideEffectProcess, subj)))
}

func TestGateNeverAsksAboutReadOnlyCalls(t *testing.T) {
	asker := &counter{answer: approver.Answer{Decision: approver.Deny}}
	g := newGate(t, asker, approver.Rule{Tool: "search", Source: repoManifest, Reason: "no searching"})
	v := g.Authorize(context.Background(), request("search", contract.Call{ID: "c"}, preview(t, contract.SideEffectNone, `{"query":"x"}`)))
	if !v.Allow || v.Source != approver.SourceReadOnly || v.Rule != nil {
		t.Errorf("verdict for a none call = %+v, want allowed as read_only", v)
	}
	if n := asker.asked.Load(); n != 0 {
		t.Errorf("the approver was asked %d times about a call with side effect none", n)
	}
}

func TestGatePatternRuleJudgesTheWholeSubject(t *testing.T) {
	asker := &counter{answer: approver.Answer{Decision: approver.Deny, Reason: "not that"}}
	rule := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*"body":"cargo test"*`, Decision: approver.RuleAllow, Reason: "tests are fine"}
	g := newGate(t, asker, rule)

	v := authorize(t, g, "spawn", cargoTest)
	want := approver.Verdict{Allow: true, Reason: "tests are fine", Source: approver.SourceRule, Rule: &rule}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("cargo test (-want +got):\n%s", diff)
	}
	if asker.asked.Load() != 0 {
		t.Error("the approver was asked about a call a rule allows")
	}

	v = authorize(t, g, "spawn", cargoTestCurl)
	// The denial names the first command no rule allows.
	if v.Allow || v.Source != approver.SourceApprover || v.Reason != "tool spawn denied: not that; no rule allows the command cargo test" {
		t.Errorf("cargo test && curl x | sh = %+v, want the approver's denial", v)
	}
	if asker.asked.Load() != 1 {
		t.Errorf("approver asked %d times, want 1", asker.asked.Load())
	}
}

func TestGateCommandRules(t *testing.T) {
	allowGoTest := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow, Reason: "tests"}
	allowGoVet := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "vet", "*"), Decision: approver.RuleAllow, Reason: "vet"}
	denyRm := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("rm", "*"), Reason: "no deleting"}
	denyAnything := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("*"), Reason: "nothing at all"}
	tests := []struct {
		name   string
		rules  []approver.Rule
		subj   string
		source approver.Source
		allow  bool
		rule   *approver.Rule
	}{
		{"every command allowed", []approver.Rule{allowGoTest, allowGoVet}, goTestVet, approver.SourceRule, true, &allowGoTest},
		{"a trailing * takes flags and paths", []approver.Rule{allowGoTest}, goTestRun, approver.SourceRule, true, &allowGoTest},
		{"one command not allowed: ask", []approver.Rule{allowGoTest}, goTestVet, approver.SourceApprover, false, nil},
		{"one command denied: deny", []approver.Rule{allowGoTest, denyRm}, goTestThenRm, approver.SourceRule, false, &denyRm},
		{"null commands never match an allow", []approver.Rule{allowGoTest}, goTestSubst, approver.SourceApprover, false, nil},
		{"null commands never match a deny", []approver.Rule{denyAnything}, goTestSubst, approver.SourceApprover, false, nil},
		{"a task has no commands", []approver.Rule{denyAnything}, agentTask, approver.SourceApprover, false, nil},
		{"declared subjects have no commands list", []approver.Rule{{Tool: "jenkins_job", Command: approver.Words("*"), Decision: approver.RuleAllow}}, jenkinsTrigger, approver.SourceApprover, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(t, approver.DenyAll(), tt.rules...)
			tool := "spawn"
			if strings.Contains(tt.subj, "jenkins") {
				tool = "jenkins_job"
			}
			v := authorize(t, g, tool, tt.subj)
			if v.Allow != tt.allow || v.Source != tt.source {
				t.Errorf("verdict = %+v, want allow %v from %s", v, tt.allow, tt.source)
			}
			if diff := cmp.Diff(tt.rule, v.Rule); diff != "" {
				t.Errorf("deciding rule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGateEmptyCommandsListMatchesNoCommandRule(t *testing.T) {
	g := newGate(t, approver.DenyAll(), approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("*"), Decision: approver.RuleAllow})
	v := authorize(t, g, "spawn", `{"body":"","commands":[],"cwd":"/repo","mode":"command","target":"local"}`)
	if v.Allow || v.Source != approver.SourceApprover {
		t.Errorf("an empty commands list was allowed by a command rule: %+v", v)
	}
}

// TestGatePrecedence is the precedence table of the package documentation,
// row by row.
func TestGatePrecedence(t *testing.T) {
	patternAllow := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*"mode":"command"*`, Decision: approver.RuleAllow, Reason: "pattern allow"}
	patternDeny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*"cwd":"/repo"*`, Reason: "pattern deny"}
	otherPatternDeny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*cargo*`, Reason: "second pattern deny"}
	commandAllow := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("cargo", "*"), Decision: approver.RuleAllow, Reason: "command allow"}
	commandDeny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("cargo", "test"), Reason: "command deny"}
	bareAllow := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Decision: approver.RuleAllow, Reason: "bare allow"}
	bareDeny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Reason: "bare deny"}
	workspaceDeny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*cargo test*`, Reason: "workspace says no", Scope: approver.ScopeWorkspace}
	otherTool := approver.Rule{Tool: "deploy", Source: repoManifest, Decision: approver.RuleAllow}
	tests := []struct {
		name  string
		rules []approver.Rule
		want  *approver.Rule // nil: no rule decides, the approver is asked
	}{
		{"a pattern allow beats a bare deny", []approver.Rule{bareDeny, patternAllow}, &patternAllow},
		{"a command allow beats a bare deny", []approver.Rule{bareDeny, commandAllow}, &commandAllow},
		{"a pattern deny beats a bare allow", []approver.Rule{bareAllow, patternDeny}, &patternDeny},
		{"deny beats allow among bare rules", []approver.Rule{bareAllow, bareDeny}, &bareDeny},
		{"deny beats allow among patterns", []approver.Rule{patternAllow, patternDeny}, &patternDeny},
		{"a pattern deny beats a command allow", []approver.Rule{commandAllow, patternDeny}, &patternDeny},
		{"a command deny beats a pattern allow", []approver.Rule{patternAllow, commandDeny}, &commandDeny},
		{"the first matching deny gives the reason", []approver.Rule{otherPatternDeny, patternDeny}, &otherPatternDeny},
		{"rule order, not kind, picks among denies", []approver.Rule{commandDeny, patternDeny}, &commandDeny},
		{"a workspace deny beats an operator allow", []approver.Rule{patternAllow, workspaceDeny}, &workspaceDeny},
		{"rules for another tool do not apply", []approver.Rule{otherTool}, nil},
		{"no rules", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &counter{answer: approver.Answer{Decision: approver.Deny, Reason: "asked"}}
			g := newGate(t, asker, tt.rules...)
			v := authorize(t, g, "spawn", cargoTest)
			if tt.want == nil {
				if v.Source != approver.SourceApprover || asker.asked.Load() != 1 {
					t.Errorf("verdict = %+v, want the approver asked once", v)
				}
				return
			}
			want := approver.Verdict{Allow: tt.want.Decision == approver.RuleAllow, Reason: tt.want.Reason, Source: approver.SourceRule, Rule: tt.want}
			if !want.Allow {
				want.Reason = "tool spawn denied: " + want.Reason
			}
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if asker.asked.Load() != 0 {
				t.Error("the approver was asked although a rule decided")
			}
		})
	}
}

func TestGateRuleWithoutReasonNamesTheTool(t *testing.T) {
	g := newGate(t, approver.AllowAll(), approver.Rule{Tool: "deploy", Scope: approver.ScopeWorkspace})
	v := authorize(t, g, "deploy", jenkinsTrigger)
	if v.Allow || v.Reason != "tool deploy denied by a workspace rule (deny deploy)" {
		t.Errorf("verdict = %+v", v)
	}
}

func TestGateVerdictRuleIsACopy(t *testing.T) {
	g := newGate(t, approver.DenyAll(), approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("cargo", "*"), Decision: approver.RuleAllow})
	v := authorize(t, g, "spawn", cargoTest)
	v.Rule.Decision = approver.RuleDeny
	v.Rule.Command[0][0] = "rm"
	if again := authorize(t, g, "spawn", cargoTest); !again.Allow || again.Rule.Command[0][0] != "cargo" {
		t.Errorf("changing a verdict's Rule changed the gate: %+v", again)
	}
}

func TestGateApproverAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer approver.Answer
		want   approver.Verdict
	}{
		{"allow", approver.Answer{Decision: approver.Allow, Reason: "fine"}, approver.Verdict{Allow: true, Reason: "fine", Source: approver.SourceApprover}},
		{"deny with a reason", approver.Answer{Decision: approver.Deny, Reason: "use make deploy"}, approver.Verdict{Reason: "tool jenkins_job denied: use make deploy", Source: approver.SourceApprover}},
		{"deny without a reason names the tool", approver.Answer{Decision: approver.Deny}, approver.Verdict{Reason: "tool jenkins_job denied by the approver", Source: approver.SourceApprover}},
		{"allow without a reason", approver.Answer{Decision: approver.Allow}, approver.Verdict{Allow: true, Reason: "allowed by the approver", Source: approver.SourceApprover}},
		{"remember on a one-time answer is ignored", approver.Answer{Decision: approver.Allow, Remember: &approver.Remember{Tool: true}}, approver.Verdict{Allow: true, Reason: "allowed by the approver", Source: approver.SourceApprover}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &counter{answer: tt.answer}
			g := newGate(t, asker)
			v := authorize(t, g, "jenkins_job", jenkinsTrigger)
			if diff := cmp.Diff(tt.want, v); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			authorize(t, g, "jenkins_job", jenkinsTrigger)
			if asker.asked.Load() != 2 || len(g.SessionRules()) != 0 {
				t.Errorf("a one-time answer was remembered: asked %d times, session rules %v", asker.asked.Load(), g.SessionRules())
			}
		})
	}
}

func TestGateApproverSeesTheRequest(t *testing.T) {
	var got approver.Request
	g := newGate(t, approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		got = req
		return approver.Answer{Decision: approver.Allow}, nil
	}))
	p := preview(t, contract.SideEffectExternal, jenkinsTrigger)
	call := contract.Call{ID: "call_7", Input: []byte(`{"job":"deploy"}`)}
	g.Authorize(context.Background(), request("jenkins_job", call, p))
	want := approver.Request{CallID: "call_7", Tool: "jenkins_job", Source: repoManifest, Preview: p, Input: call.Input}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestGateSessionAnswers(t *testing.T) {
	t.Run("exact call", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.AllowSession, Reason: "ok for now"}}
		g := newGate(t, asker)
		first := authorize(t, g, "spawn", cargoTest)
		second := authorize(t, g, "spawn", cargoTest)
		if !first.Allow || first.Source != approver.SourceApprover {
			t.Errorf("first = %+v", first)
		}
		wantRule := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Subject: cargoTest, Decision: approver.RuleAllow, Reason: "ok for now", Scope: approver.ScopeSession}
		if diff := cmp.Diff(approver.Verdict{Allow: true, Reason: "ok for now", Source: approver.SourceRule, Rule: &wantRule}, second); diff != "" {
			t.Errorf("second (-want +got):\n%s", diff)
		}
		if other := authorize(t, g, "spawn", cargoTestCurl); other.Source != approver.SourceApprover {
			t.Errorf("another subject was covered by an exact-call answer: %+v", other)
		}
		if other := authorize(t, g, "spawn2", cargoTest); other.Source != approver.SourceApprover {
			t.Errorf("another tool was covered by an exact-call answer: %+v", other)
		}
		if n := asker.asked.Load(); n != 3 {
			t.Errorf("asked %d times, want 3", n)
		}
	})
	t.Run("exact call with glob characters in the subject", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.AllowSession}}
		g := newGate(t, asker)
		lsGo := `{"body":"ls *.go","commands":[["ls","*.go"]],"cwd":"/repo","mode":"command","target":"local"}`
		lsAll := `{"body":"ls *.goXX","commands":[["ls","*.goXX"]],"cwd":"/repo","mode":"command","target":"local"}`
		authorize(t, g, "spawn", lsGo)
		if v := authorize(t, g, "spawn", lsAll); v.Source != approver.SourceApprover {
			t.Errorf("an exact-call answer about %q covered %q: %+v", lsGo, lsAll, v)
		}
	})
	t.Run("whole tool", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Tool: true}}}
		g := newGate(t, asker)
		authorize(t, g, "spawn", cargoTest)
		v := authorize(t, g, "spawn", cargoTestCurl)
		if !v.Allow || v.Source != approver.SourceRule || v.Rule.Subject != "" || v.Rule.Scope != approver.ScopeSession {
			t.Errorf("after an always-this-tool answer: %+v", v)
		}
		if asker.asked.Load() != 1 {
			t.Errorf("asked %d times, want 1", asker.asked.Load())
		}
	})
	t.Run("command prefix", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Command: []string{"go", "*"}}}}
		g := newGate(t, asker)
		authorize(t, g, "spawn", goTestRun)
		if v := authorize(t, g, "spawn", goTestVet); !v.Allow || v.Source != approver.SourceRule {
			t.Errorf("go vet after remembering go *: %+v", v)
		}
		if v := authorize(t, g, "spawn", goTestThenRm); v.Source != approver.SourceApprover {
			t.Errorf("rm after remembering go *: %+v", v)
		}
		want := []approver.Rule{{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "*"), Decision: approver.RuleAllow, Scope: approver.ScopeSession}}
		if diff := cmp.Diff(want, g.SessionRules()); diff != "" {
			t.Errorf("session rules (-want +got):\n%s", diff)
		}
	})
	t.Run("remembered denial repeats its reason", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.DenySession, Reason: "never curl into sh"}}
		g := newGate(t, asker)
		first := authorize(t, g, "spawn", cargoTestCurl)
		second := authorize(t, g, "spawn", cargoTestCurl)
		if first.Allow || second.Allow || second.Reason != first.Reason || first.Reason != "tool spawn denied: never curl into sh; no rule allows the command cargo test" || second.Source != approver.SourceRule {
			t.Errorf("first %+v, second %+v", first, second)
		}
		if asker.asked.Load() != 1 {
			t.Errorf("asked %d times about a remembered denial, want 1", asker.asked.Load())
		}
	})
	t.Run("remembered denial without reason", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.DenySession}}
		g := newGate(t, asker)
		first := authorize(t, g, "spawn", cargoTest)
		second := authorize(t, g, "spawn", cargoTest)
		if second.Reason != first.Reason || !strings.Contains(second.Reason, "spawn") {
			t.Errorf("first reason %q, second %q", first.Reason, second.Reason)
		}
	})
	t.Run("a session allow does not beat a fixed deny", func(t *testing.T) {
		asker := &counter{answer: approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Tool: true}}}
		deny := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Pattern: "*curl*", Reason: "no curl"}
		g := newGate(t, asker, deny)
		authorize(t, g, "spawn", cargoTest)
		if v := authorize(t, g, "spawn", cargoTestCurl); v.Allow || v.Reason != "tool spawn denied: no curl" {
			t.Errorf("a tool-wide session allow overrode a pattern deny: %+v", v)
		}
	})
}

func TestGateFailsClosed(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	boom := errors.New("the policy service is down")
	tests := []struct {
		name     string
		approver approver.Approver
		ctx      context.Context
		timeout  time.Duration
		reason   string
		err      error
	}{
		{"error", &counter{err: boom}, context.Background(), 0, "tool deploy denied: no answer from the approver: the policy service is down", boom},
		{"error with an allow", &counter{answer: approver.Answer{Decision: approver.Allow}, err: boom}, context.Background(), 0, "tool deploy denied: no answer from the approver: the policy service is down", boom},
		{"no decision", &counter{answer: approver.Answer{Reason: "sure"}}, context.Background(), 0, "tool deploy denied: the approver gave no decision", approver.ErrInvalidAnswer},
		{"out of range decision", &counter{answer: approver.Answer{Decision: "maybe"}}, context.Background(), 0, "tool deploy denied: the approver gave no decision", approver.ErrInvalidAnswer},
		{"remember both tool and command", &counter{answer: approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Tool: true, Command: []string{"go"}}}}, context.Background(), 0,
			"tool deploy denied: the approver's answer cannot be remembered: it asks to remember more than one of the whole tool, a command prefix and the proposed rules; choose one", approver.ErrInvalidAnswer},
		{"remember an empty word", &counter{answer: approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Command: []string{"go", ""}}}}, context.Background(), 0,
			"tool deploy denied: the approver's answer cannot be remembered: its command prefix has an empty word at position 2; use * for any word", approver.ErrInvalidAnswer},
		{"no approver", nil, context.Background(), 0, "tool deploy denied: no approver is configured to ask", approver.ErrNoApprover},
		{"cancelled before asking", approver.AllowAll(), cancelled, 0, "tool deploy denied: the call was cancelled before the approver answered", context.Canceled},
		{"deadline passed before asking", approver.AllowAll(), expired, 0, "tool deploy denied: the call's deadline passed before the approver answered", context.DeadlineExceeded},
		{"slow", slowApprover(5 * time.Second), context.Background(), 50 * time.Millisecond, "tool deploy denied: the approver did not answer within 50ms", context.DeadlineExceeded},
	}
	for _, tt := range tests {
		// In a bubble, the slow approver is slower than the timeout
		// however loaded the machine.
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, err := approver.NewGate(tt.approver, &approver.GateOptions{Timeout: tt.timeout})
				if err != nil {
					t.Fatal(err)
				}
				v := g.Authorize(tt.ctx, request("deploy", contract.Call{ID: "c"}, preview(t, contract.SideEffectExternal, jenkinsTrigger)))
				if v.Allow || v.Source != approver.SourceFailClosed || v.Reason != tt.reason {
					t.Errorf("verdict = %+v\nwant a fail-closed denial with reason %q", v, tt.reason)
				}
				if !errors.Is(v.Err, tt.err) {
					t.Errorf("Err = %v, want %v", v.Err, tt.err)
				}
				// Whatever the approver answers late is not taken either.
				time.Sleep(time.Minute)
				synctest.Wait()
				if len(g.SessionRules()) != 0 {
					t.Errorf("a failed question was remembered: %v", g.SessionRules())
				}
			})
		})
	}
}

// slowApprover ignores its context and answers allow after d.
func slowApprover(d time.Duration) approver.Approver {
	return approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		time.Sleep(d)
		return approver.Answer{Decision: approver.AllowSession}, nil
	})
}

// In a synctest bubble the clock moves only when every goroutine waits,
// so the timeout is measured exactly, however loaded the machine.
func TestGateSlowApproverDeniesWithinTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := approver.NewGate(slowApprover(10*time.Second), &approver.GateOptions{Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		v := authorize(t, g, "spawn", cargoTest)
		elapsed := time.Since(start)
		if v.Allow || v.Source != approver.SourceFailClosed || !errors.Is(v.Err, context.DeadlineExceeded) {
			t.Errorf("verdict = %+v", v)
		}
		if elapsed != 100*time.Millisecond {
			t.Errorf("a 100ms timeout denied after %v, want 100ms: the gate waited for an approver that ignores its context", elapsed)
		}
		// The approver, which ignores its context, ends before the bubble
		// may.
		time.Sleep(10 * time.Second)
	})
}

func TestGateLateAnswerIsNotRemembered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
			time.Sleep(150 * time.Millisecond)
			return approver.Answer{Decision: approver.AllowSession, Remember: &approver.Remember{Tool: true}}, nil
		})
		g, err := approver.NewGate(late, &approver.GateOptions{Timeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if v := authorize(t, g, "spawn", cargoTest); v.Allow {
			t.Fatalf("verdict = %+v", v)
		}
		// Let the approver answer, and whatever would take its answer
		// finish with it.
		time.Sleep(time.Second)
		synctest.Wait()
		if rules := g.SessionRules(); len(rules) != 0 {
			t.Errorf("an answer that came after the timeout was remembered: %v", rules)
		}
	})
}

func TestGateCancelWhileAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	waiting := approver.ApproverFunc(func(ctx context.Context, _ approver.Request) (approver.Answer, error) {
		cancel()
		<-ctx.Done()
		return approver.Answer{Decision: approver.Allow}, nil // an answer made only because it was stopped
	})
	g := newGate(t, waiting)
	v := g.Authorize(ctx, request("spawn", contract.Call{}, preview(t, contract.SideEffectProcess, cargoTest)))
	if v.Allow || v.Source != approver.SourceFailClosed || !errors.Is(v.Err, context.Canceled) {
		t.Errorf("verdict = %+v", v)
	}
}

func TestGatePanickingApproverDenies(t *testing.T) {
	panicky := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		panic("approver bug")
	})
	g := newGate(t, panicky)
	for range 3 { // the process lives on and the gate keeps working
		v := authorize(t, g, "spawn", cargoTest)
		if v.Allow || v.Source != approver.SourceFailClosed || v.Reason != "tool spawn denied: the approver panicked; no rule allows the command cargo test" {
			t.Errorf("verdict = %+v", v)
		}
		var pe *approver.PanicError
		if !errors.As(v.Err, &pe) || pe.Value != "approver bug" || !strings.Contains(string(pe.Stack), "gate_test.go") {
			t.Errorf("Err = %v, want a *PanicError with the value and the stack", v.Err)
		}
	}
}

func TestGateEmptySubjectIsMatchedAsNull(t *testing.T) {
	g := newGate(t, approver.DenyAll(), approver.Rule{Tool: "host_tool", Source: repoManifest, Pattern: "null", Decision: approver.RuleAllow})
	v := g.Authorize(context.Background(), request("host_tool", contract.Call{}, contract.Preview{SideEffect: contract.SideEffectLocalState}))
	if !v.Allow || v.Source != approver.SourceRule {
		t.Errorf("verdict = %+v", v)
	}
	asker := &counter{answer: approver.Answer{Decision: approver.AllowSession}}
	g = newGate(t, asker)
	g.Authorize(context.Background(), request("host_tool", contract.Call{}, contract.Preview{SideEffect: contract.SideEffectLocalState}))
	rules := g.SessionRules()
	if len(rules) != 1 || rules[0].Subject != "null" {
		t.Errorf("an exact-call answer about an empty subject became %v, want a rule for subject null", rules)
	}
}

func TestGateConcurrentAuthorize(t *testing.T) {
	var asked atomic.Int32
	a := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		asked.Add(1)
		if strings.Contains(string(req.Preview.Subject), "curl") {
			return approver.Answer{Decision: approver.DenySession, Reason: "no curl"}, nil
		}
		return approver.Answer{Decision: approver.AllowSession}, nil
	})
	g, err := approver.NewGate(a, &approver.GateOptions{
		Rules:   []approver.Rule{{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow}},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	const subjects = 8
	subj := func(i int) string {
		body := fmt.Sprintf("make target%d", i)
		if i%2 == 1 {
			body = fmt.Sprintf("curl host%d", i)
		}
		words := strings.Fields(body)
		return fmt.Sprintf(`{"body":%q,"commands":[[%q,%q]],"cwd":"/repo","mode":"command","target":"local"}`, body, words[0], words[1])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64*20)
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n := (w + i) % (subjects + 1)
				s, wantAllow := goTestRun, true
				if n < subjects {
					s, wantAllow = subj(n), n%2 == 0
				}
				v := g.Authorize(context.Background(), request("spawn", contract.Call{ID: fmt.Sprint(w, i)}, contract.Preview{SideEffect: contract.SideEffectProcess, Subject: []byte(s)}))
				if v.Allow != wantAllow {
					errs <- fmt.Sprintf("worker %d call %d: %+v", w, i, v)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if rules := g.SessionRules(); len(rules) != subjects {
		t.Errorf("%d session rules after answers about %d subjects: %v", len(rules), subjects, rules)
	}
	if n := asked.Load(); n < subjects || n > 64*20 {
		t.Errorf("asked %d times", n)
	}
}

func TestNewGateChecksRules(t *testing.T) {
	tests := []struct {
		name  string
		rules []approver.Rule
		says  string
	}{
		{"workspace allow", []approver.Rule{{Tool: "spawn"}, {Tool: "deploy", Decision: approver.RuleAllow, Scope: approver.ScopeWorkspace}}, "rule 2 (tool deploy): an allow rule is refused here"},
		{"invalid tool", []approver.Rule{{Tool: "bad name"}}, "rule 1: \"tool\" is not a valid tool name"},
		{"pattern and command", []approver.Rule{{Tool: "spawn", Pattern: "*", Command: approver.Words("x")}}, "rule 1 (tool spawn): a rule has at most one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Rules: tt.rules})
			var ce *configfile.Error
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.says) {
				t.Errorf("NewGate error = %v, want a *configfile.Error starting %q", err, tt.says)
			}
		})
	}
	if _, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Timeout: -1}); err == nil {
		t.Error("NewGate accepted a negative timeout")
	}
	if _, err := approver.NewGate(nil, nil); err != nil {
		t.Errorf("NewGate(nil, nil) = %v", err)
	}
}

// TestWorkedExamples checks the worked examples of docs/rules.md, row by row.
func TestWorkedExamples(t *testing.T) {
	const cargoTestSubst = `{"body":"cargo test $(cat list)","commands":null,"cwd":"/repo","mode":"command","target":"local"}`
	rows := []struct {
		rules string
		want  [3]string // for cargo test, ... && curl x | sh, ... $(cat list)
	}{
		{`{"tool":"spawn","pattern":"*\"body\":\"cargo test\"*","allow":true}`, [3]string{"allow", "asked", "asked"}},
		{`{"tool":"spawn","command":["cargo","test","*"],"allow":true}`, [3]string{"allow", "asked", "asked"}},
		{`{"tool":"spawn","command":["cargo","test","*"],"allow":true}, {"tool":"spawn","command":["curl","*"],"allow":false}`, [3]string{"allow", "deny", "asked"}},
		{`{"tool":"spawn","allow":true}, {"tool":"spawn","pattern":"*curl*","allow":false}`, [3]string{"allow", "deny", "allow"}},
	}
	for _, row := range rows {
		rules, err := approver.ParseRules([]byte(`{"schema":1,"rules":[` + row.rules + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		g := newGate(t, approver.DenyAll(), rules...)
		for i, subj := range []string{cargoTest, cargoTestCurl, cargoTestSubst} {
			v := authorize(t, g, "spawn", subj)
			got := "asked"
			if v.Source == approver.SourceRule {
				got = map[bool]string{true: "allow", false: "deny"}[v.Allow]
			}
			if got != row.want[i] {
				t.Errorf("rules %s on %s: %s, want %s", row.rules, subj, got, row.want[i])
			}
		}
	}
	declared, err := approver.ParseRules([]byte(`{"schema":1,"rules":[{"tool": "jenkins_job", "pattern": "*\"input\":{\"job\":\"deploy\"}*", "allow": false, "reason": "deploys go through CI"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v := authorize(t, newGate(t, approver.AllowAll(), declared...), "jenkins_job", jenkinsTrigger); v.Allow || v.Reason != "tool jenkins_job denied: deploys go through CI" {
		t.Errorf("declared example: %+v", v)
	}
}
