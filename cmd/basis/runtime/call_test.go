//go:build unix

package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

func TestUnknownToolIsRefusedWithSuggestions(t *testing.T) {
	rt := build(t, nil, newHostTool("jenkins_job", contract.SideEffectNone), newHostTool("json_query", contract.SideEffectNone), newHostTool("ticket", contract.SideEffectNone))
	tests := []struct{ name, want string }{
		{"jenkins_jbo", `there is no tool named "jenkins_jbo"; did you mean "jenkins_job"?`},
		{"Ticket", `there is no tool named "Ticket"; did you mean "ticket"?`},
		{"zzzzzzzzzzzz", `there is no tool named "zzzzzzzzzzzz"; the tools are "jenkins_job", "json_query" and "ticket"`},
	}
	for _, tt := range tests {
		out := rt.Call(t.Context(), tt.name, contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
		if out.Status != runtime.StatusRefused || out.Stage != runtime.StageUnknown || out.Text != tt.want {
			t.Errorf("%s: %v %v %q; want refused/unknown %q", tt.name, out.Status, out.Stage, out.Text, tt.want)
		}
		if !errors.Is(out.Err, runtime.ErrUnknownTool) || out.Err.Error() != tt.want {
			t.Errorf("%s: Err = %v, want ErrUnknownTool with the refusal's text", tt.name, out.Err)
		}
	}
}

func TestInvalidInputNeverReachesThePreview(t *testing.T) {
	const (
		schemaSays  = "the input for echo does not match its schema: "
		invalidSays = "the input for echo is invalid: "
	)
	tests := []struct {
		input  string
		prefix string
		says   string
	}{
		{`{"text": 7}`, schemaSays, "/text"},
		{`{}`, schemaSays, "text"},
		{``, schemaSays, "text"},
		{`{"text": "x", "extra": 1}`, schemaSays, "extra"},
		{`not json`, invalidSays, "not valid JSON"},
		{`["text"]`, invalidSays, "must be a JSON object"},
		{`{"text": "x"} {"text": "y"}`, invalidSays, "more after"},
		// What a program reads must be what the approver saw: keys a
		// reader could take either way are refused before any schema.
		{`{"text": "deploy", "text": "test"}`, invalidSays, "/text: the key is written twice"},
		{`{"text": "test", "Text": "deploy"}`, invalidSays, "/Text: another key of this object differs from it only in letter case"},
		{`{"text": "x", "n": {"a": 1, "A": 2}}`, invalidSays, "/n/A"},
		{`{"text": "x", "n": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, invalidSays, "more than 64 deep"},
		{`{"text": "` + strings.Repeat("a", contract.MaxInputBytes) + `"}`, invalidSays, fmt.Sprintf("the limit is %d", contract.MaxInputBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.input[:min(len(tt.input), 48)], func(t *testing.T) {
			tool := newHostTool("echo", contract.SideEffectProcess)
			appr := &countingApprover{decision: approver.Allow}
			rt := build(t, &runtime.Options{Gate: newGate(t, appr)}, tool)
			out := rt.Call(t.Context(), "echo", contract.Call{Input: json.RawMessage(tt.input)})
			if out.Status != runtime.StatusRefused || out.Stage != runtime.StageInvalid {
				t.Errorf("%v/%v %q, want refused as invalid", out.Status, out.Stage, out.Text)
			}
			if !strings.HasPrefix(out.Text, tt.prefix) || !strings.Contains(out.Text, tt.says) {
				t.Errorf("text %q should start %q and name %q", out.Text, tt.prefix, tt.says)
			}
			if !errors.Is(out.Err, contract.ErrInvalidInput) || errors.Is(out.Err, contract.ErrRefused) {
				t.Errorf("Err = %v, want contract.ErrInvalidInput only", out.Err)
			}
			if n := tool.previews.Load() + tool.executes.Load() + appr.asked.Load(); n != 0 {
				t.Errorf("invalid input reached the preview, the approver or the tool %d times", n)
			}
		})
	}
}

func TestSchemaRefusalKeepsItsProblems(t *testing.T) {
	rt := build(t, nil, newHostTool("echo", contract.SideEffectNone))
	out := rt.Call(t.Context(), "echo", contract.Call{Input: json.RawMessage(`{"text": 7}`)})
	var ie *inputschema.InputError
	if !errors.As(out.Err, &ie) {
		t.Fatalf("Err %T does not hold the *inputschema.InputError", out.Err)
	}
	if diff := cmp.Diff([]inputschema.Problem{{Field: "/text", Rule: "expected string, but got number"}}, ie.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// explodingSchema's anyOf branches recurse through the same $ref: a
// failing input nested n deep costs 2^n evaluations.
const explodingSchema = `{"$defs": {"n": {"anyOf": [
	{"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}},
	{"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}}
]}}, "properties": {"x": {"$ref": "#/$defs/n"}}}`

func explodingInput(depth int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"x":`, depth) + "1" + strings.Repeat("}", depth))
}

// TestExplodingSchemaIsRefusedNotRun: a schema whose check would take
// hours is refused within its budget, as invalid input, before the
// preview; and a check the caller cancels stops.
func TestExplodingSchemaIsRefusedNotRun(t *testing.T) {
	tool := newHostTool("deep", contract.SideEffectProcess)
	tool.desc.InputSchema = json.RawMessage(explodingSchema)
	appr := &countingApprover{decision: approver.Allow}
	rt := build(t, &runtime.Options{Gate: newGate(t, appr)}, tool)

	out := rt.Call(t.Context(), "deep", contract.Call{Input: explodingInput(40)})
	var be *inputschema.BudgetError
	if out.Status != runtime.StatusRefused || out.Stage != runtime.StageInvalid || !errors.As(out.Err, &be) || !errors.Is(out.Err, contract.ErrInvalidInput) {
		t.Fatalf("%v/%v %q (%T), want refused as invalid with a *BudgetError", out.Status, out.Stage, out.Text, out.Err)
	}
	if !strings.Contains(out.Text, "validating this input against deep's schema takes more than") {
		t.Errorf("text %q", out.Text)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out = rt.Call(ctx, "deep", contract.Call{Input: explodingInput(40)})
	if out.Status != runtime.StatusRefused || out.Stage != runtime.StageInvalid || !errors.Is(out.Err, context.Canceled) {
		t.Errorf("cancelled: %v/%v %q, want refused wrapping context.Canceled", out.Status, out.Stage, out.Text)
	}
	if n := tool.previews.Load() + tool.executes.Load() + appr.asked.Load(); n != 0 {
		t.Errorf("the preview, the approver or the tool was reached %d times", n)
	}
}

func TestInvalidInputNeverStartsAProgram(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	tool := newProcessTool("job", "-touch", marker)
	tool.desc.InputSchema = json.RawMessage(`{"type": "object", "properties": {"job": {"type": "string"}}, "required": ["job"]}`)
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow})}, tool)
	for _, input := range []string{`{"job": 12}`, `{"job": "build", "JOB": "deploy"}`} {
		out := rt.Call(t.Context(), "job", contract.Call{Input: json.RawMessage(input)})
		if out.Stage != runtime.StageInvalid {
			t.Errorf("%s: outcome %v %q", input, out.Stage, out.Text)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the program ran on invalid input", input)
		}
	}
	out := rt.Call(t.Context(), "job", contract.Call{Input: json.RawMessage(`{"job": "build"}`)})
	if out.Status != runtime.StatusOK {
		t.Fatalf("valid call: %v %q", out.Status, out.Text)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the program did not run on valid input")
	}
}

// The input the approver is shown and the input the tool runs with are
// one text: the canonical bytes, whatever spacing, key order or escapes
// the model used.
func TestPreviewAndExecuteGetTheCanonicalInput(t *testing.T) {
	const (
		sent      = `{ "text" : "a \u0026\u0026 b <c> \u00e9" }`
		canonical = `{"text":"a && b <c> é"}`
	)
	var previewed, executed string
	host := newHostTool("host", contract.SideEffectNone)
	host.preview = func(_ context.Context, call contract.Call) (contract.Preview, error) {
		previewed = string(call.Input)
		return contract.Preview{SideEffect: contract.SideEffectNone, Subject: call.Input}, nil
	}
	host.execute = func(_ context.Context, call contract.Call) (contract.Result, error) {
		executed = string(call.Input)
		return contract.Result{Text: "ok"}, nil
	}
	program := newProcessTool("program", "-stdin")
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow})}, host, program)

	if out := rt.Call(t.Context(), "host", contract.Call{Input: json.RawMessage(sent)}); out.Status != runtime.StatusOK {
		t.Fatalf("host call: %v %q", out.Status, out.Text)
	}
	if diff := cmp.Diff([]string{canonical, canonical}, []string{previewed, executed}); diff != "" {
		t.Errorf("input the preview and Execute got (-want +got):\n%s", diff)
	}

	out := rt.Call(t.Context(), "program", contract.Call{Input: json.RawMessage(sent)})
	if out.Status != runtime.StatusOK {
		t.Fatalf("program call: %v %q", out.Status, out.Text)
	}
	if out.Text != canonical {
		t.Errorf("the program read %q on stdin, want %q", out.Text, canonical)
	}
	if !bytes.Contains(out.Preview.Subject, []byte(`"input":`+canonical)) {
		t.Errorf("subject %s does not show the bytes the program read", out.Preview.Subject)
	}
}

func TestApprovalOrder(t *testing.T) {
	denyRule := approver.Rule{Tool: "write", Decision: approver.RuleDeny, Reason: "writes are off today"}
	allowRule := approver.Rule{Tool: "allowed", Decision: approver.RuleAllow, Source: approver.AnySource}
	tests := []struct {
		name       string
		tool       *hostTool
		decision   approver.Decision
		wantStatus runtime.Status
		wantSource approver.Source
		wantAsked  int32
		wantRan    int32
		wantText   string
	}{
		{"read-only never asks", newHostTool("read", contract.SideEffectNone), approver.Deny, runtime.StatusOK, approver.SourceReadOnly, 0, 1, "read ran"},
		{"a deny rule answers first", newHostTool("write", contract.SideEffectProcess), approver.Allow, runtime.StatusRefused, approver.SourceRule, 0, 0, "tool write denied: writes are off today"},
		{"an allow rule answers first", newHostTool("allowed", contract.SideEffectExternal), approver.Deny, runtime.StatusOK, approver.SourceRule, 0, 1, "allowed ran"},
		{"then the approver: allow", newHostTool("other", contract.SideEffectProcess), approver.Allow, runtime.StatusOK, approver.SourceApprover, 1, 1, "other ran"},
		{"then the approver: deny", newHostTool("other", contract.SideEffectProcess), approver.Deny, runtime.StatusRefused, approver.SourceApprover, 1, 0, "tool other denied: the test approver said deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			appr := &countingApprover{decision: tt.decision}
			rt := build(t, &runtime.Options{Gate: newGate(t, appr, denyRule, allowRule)}, tt.tool)
			out := rt.Call(t.Context(), tt.tool.desc.Name, contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
			if out.Status != tt.wantStatus || out.Verdict == nil || out.Verdict.Source != tt.wantSource || out.Text != tt.wantText {
				t.Errorf("outcome %v %q, verdict %+v", out.Status, out.Text, out.Verdict)
			}
			if out.Status == runtime.StatusRefused && out.Stage != runtime.StageDenied {
				t.Errorf("stage %v, want denied", out.Stage)
			}
			if got := appr.asked.Load(); got != tt.wantAsked {
				t.Errorf("approver asked %d times, want %d", got, tt.wantAsked)
			}
			if got := tt.tool.executes.Load(); got != tt.wantRan {
				t.Errorf("tool ran %d times, want %d", got, tt.wantRan)
			}
		})
	}
}

func TestNoGateFailsClosed(t *testing.T) {
	read, write := newHostTool("read", contract.SideEffectNone), newHostTool("write", contract.SideEffectLocalState)
	rt := build(t, nil, read, write)
	if out := rt.Call(t.Context(), "read", contract.Call{Input: json.RawMessage(`{"text":"x"}`)}); out.Status != runtime.StatusOK {
		t.Errorf("read-only call without a gate: %v %q", out.Status, out.Text)
	}
	out := rt.Call(t.Context(), "write", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Stage != runtime.StageDenied || out.Verdict.Source != approver.SourceFailClosed || write.executes.Load() != 0 {
		t.Errorf("consequential call without a gate: %v %v %q", out.Stage, out.Verdict, out.Text)
	}
	if !strings.Contains(out.Text, "no approval gate") {
		t.Errorf("text %q does not say why", out.Text)
	}
}

func TestPreviewRefusal(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		// A host tool's plain error is a refusal all the same.
		{"plain", errors.New("picky refuses: use the other door")},
		// A binding's unavailable tool (a ${VAR} unset, an MCP server
		// that failed) refuses with contract.ErrRefused and its reason.
		{"unavailable", fmt.Errorf("%w: issues is unavailable: GITHUB_TOKEN is not set; set it and call again", contract.ErrRefused)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newHostTool("picky", contract.SideEffectProcess)
			tool.preview = func(context.Context, contract.Call) (contract.Preview, error) { return contract.Preview{}, tt.err }
			appr := &countingApprover{decision: approver.Allow}
			var audit bytes.Buffer
			rt := build(t, &runtime.Options{Gate: newGate(t, appr), Audit: &audit}, tool)
			out := rt.Call(t.Context(), "picky", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
			if out.Status != runtime.StatusRefused || out.Stage != runtime.StagePreview || out.Text != tt.err.Error() {
				t.Errorf("outcome %v %v %q, want a preview refusal in the tool's words %q", out.Status, out.Stage, out.Text, tt.err)
			}
			if appr.asked.Load() != 0 || tool.executes.Load() != 0 {
				t.Errorf("asked %d, ran %d", appr.asked.Load(), tool.executes.Load())
			}
			if !errors.Is(out.Err, contract.ErrRefused) || !errors.Is(out.Err, tt.err) {
				t.Errorf("Err = %v, want contract.ErrRefused wrapping the tool's error", out.Err)
			}
			var rec runtime.AuditRecord
			if err := json.Unmarshal(audit.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Stage != runtime.StagePreview || rec.Refusal != tt.err.Error() {
				t.Errorf("audit stage %v refusal %q", rec.Stage, rec.Refusal)
			}
		})
	}
}

// unwrapPanics reads fine but panics when unwrapped.
type unwrapPanics struct{}

func (unwrapPanics) Error() string { return "fine so far" }
func (unwrapPanics) Unwrap() error { panic("Unwrap of a broken error type") }

func TestPanickingToolsDoNotTakeTheHostDown(t *testing.T) {
	tests := []struct {
		name    string
		preview func(context.Context, contract.Call) (contract.Preview, error)
		execute func(context.Context, contract.Call) (contract.Result, error)
		status  runtime.Status
		method  string
		says    string
	}{
		{"Execute panics", nil,
			func(context.Context, contract.Call) (contract.Result, error) { panic("kaboom") },
			runtime.StatusToolError, "Execute", "boom failed: it panicked (kaboom)"},
		{"preview panics",
			func(context.Context, contract.Call) (contract.Preview, error) { panic("kaboom") }, nil,
			runtime.StatusRefused, "AuthorizationPreview", "boom refused the call: its authorization preview panicked (kaboom)"},
		{"Execute's error panics in Error", nil,
			func(context.Context, contract.Call) (contract.Result, error) {
				return contract.Result{}, &panickyError{}
			},
			runtime.StatusToolError, "Error", "boom's error could not be read: it panicked (Error() of a broken error type)"},
		{"preview's error panics in Error",
			func(context.Context, contract.Call) (contract.Preview, error) {
				return contract.Preview{}, &panickyError{}
			}, nil,
			runtime.StatusRefused, "Error", "boom's error could not be read: it panicked (Error() of a broken error type)"},
		{"Execute's error panics in Unwrap", nil,
			func(context.Context, contract.Call) (contract.Result, error) {
				return contract.Result{}, unwrapPanics{}
			},
			runtime.StatusToolError, "Error", "boom's error could not be read: it panicked (Unwrap of a broken error type)"},
		{"the panic's own value panics when printed", nil,
			func(context.Context, contract.Call) (contract.Result, error) { panic(&panickyError{}) },
			runtime.StatusToolError, "Execute", "boom failed: it panicked (%!v(PANIC=Error method: Error() of a broken error type))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newHostTool("boom", contract.SideEffectNone)
			tool.preview, tool.execute = tt.preview, tt.execute
			var audit bytes.Buffer
			rt := build(t, &runtime.Options{Audit: &audit}, tool)
			out := rt.Call(t.Context(), "boom", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
			if out.Status != tt.status || out.Text != tt.says {
				t.Errorf("outcome %v %q, want %v %q", out.Status, out.Text, tt.status, tt.says)
			}
			if tt.status == runtime.StatusRefused && out.Stage != runtime.StagePreview {
				t.Errorf("stage %v, want preview", out.Stage)
			}
			var pe *runtime.PanicError
			if !errors.As(out.Err, &pe) || pe.Method != tt.method {
				t.Errorf("Err = %#v, want a *PanicError from %s", out.Err, tt.method)
			}
			// The outcome's error is safe to print, and the call is on
			// record.
			_ = fmt.Sprintf("%v %+v", out.Err, out)
			// A call that ran has its start and its end on record; one
			// refused at the preview, its end only.
			lines := 2
			if tt.status == runtime.StatusRefused {
				lines = 1
			}
			if strings.Count(audit.String(), "\n") != lines {
				t.Errorf("audit log, want %d lines:\n%s", lines, audit.String())
			}
		})
	}
}

func TestTimeoutsNameTheLimitThatFired(t *testing.T) {
	waitForDeadline := func(ctx context.Context, _ contract.Call) (contract.Result, error) {
		<-ctx.Done()
		return contract.Result{}, errors.New("slow was stopped: " + ctx.Err().Error())
	}
	tests := []struct {
		name           string
		tool           func() contract.ExecutableTool
		defaultTimeout time.Duration
		wantPrefix     string
		wantLimit      string
		limit          time.Duration
		own            bool
		exit           subprocess.Kind
	}{
		{"host tool, its own timeout",
			func() contract.ExecutableTool {
				h := newHostTool("slow", contract.SideEffectNone)
				h.desc.Timeout, h.execute = 50*time.Millisecond, waitForDeadline
				return h
			}, time.Hour,
			"slow was stopped: context deadline exceeded",
			"the tool's timeout of 50ms fired; its Descriptor.Timeout raises it", 50 * time.Millisecond, true, ""},
		{"host tool, the runtime's default",
			func() contract.ExecutableTool {
				h := newHostTool("slow", contract.SideEffectNone)
				h.execute = waitForDeadline
				return h
			}, 50 * time.Millisecond,
			"slow was stopped: context deadline exceeded",
			"the runtime's default of 50ms fired, since the tool states no timeout of its own; hosts set Options.DefaultTimeout", 50 * time.Millisecond, false, ""},
		// The program's own deadline fires first and says so: the
		// runtime's deadline does not pre-empt it.
		{"program, its own timeout",
			func() contract.ExecutableTool {
				p := newProcessTool("slow", "-sleep", "1m")
				p.desc.Timeout = 300 * time.Millisecond
				return p
			}, time.Hour,
			"slow did not finish within 300ms and was stopped",
			"the tool's timeout of 300ms fired; timeout_ms in the manifest raises it", 300 * time.Millisecond, true, subprocess.TimedOut},
		{"program, the runtime's default",
			func() contract.ExecutableTool { return newProcessTool("slow", "-sleep", "1m") }, 300 * time.Millisecond,
			"slow did not finish before the call's deadline and was stopped",
			"the runtime's default of 300ms fired", 300 * time.Millisecond, false, subprocess.TimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := build(t, &runtime.Options{DefaultTimeout: tt.defaultTimeout, Gate: newGate(t, &countingApprover{decision: approver.Allow})}, tt.tool())
			out := rt.Call(t.Context(), "slow", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
			if out.Status != runtime.StatusToolError || !strings.HasPrefix(out.Text, tt.wantPrefix+" (") || !strings.Contains(out.Text, tt.wantLimit) {
				t.Errorf("outcome %v %q, want %q naming %q", out.Status, out.Text, tt.wantPrefix, tt.wantLimit)
			}
			var te *runtime.TimeoutError
			if !errors.As(out.Err, &te) {
				t.Fatalf("Err %T is not a *TimeoutError", out.Err)
			}
			if te.Limit != tt.limit || te.ToolTimeout != tt.own || !errors.Is(out.Err, context.DeadlineExceeded) {
				t.Errorf("TimeoutError limit %v own %v, Is(DeadlineExceeded) %v", te.Limit, te.ToolTimeout, errors.Is(out.Err, context.DeadlineExceeded))
			}
			if tt.exit != "" && (out.Exit == nil || out.Exit.Kind != tt.exit) {
				t.Errorf("exit %v, want %v", out.Exit, tt.exit)
			}
		})
	}
}

func TestTheCallersDeadlineIsNotBlamedOnALimit(t *testing.T) {
	slow := newHostTool("slow", contract.SideEffectNone)
	slow.execute = func(ctx context.Context, _ contract.Call) (contract.Result, error) {
		<-ctx.Done()
		return contract.Result{}, errors.New("slow was stopped: " + ctx.Err().Error())
	}
	rt := build(t, &runtime.Options{DefaultTimeout: time.Hour}, slow)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	out := rt.Call(ctx, "slow", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	var te *runtime.TimeoutError
	if out.Status != runtime.StatusToolError || out.Text != "slow was stopped: context deadline exceeded" || errors.As(out.Err, &te) {
		t.Errorf("outcome %v %q %T: the caller's own deadline was blamed on a limit", out.Status, out.Text, out.Err)
	}
}

func TestFailedProgramCarriesItsExit(t *testing.T) {
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow})}, newProcessTool("fail", "-stderr", "broken", "-exit", "3"))
	out := rt.Call(t.Context(), "fail", contract.Call{Input: json.RawMessage(`{}`)})
	want := &subprocess.Outcome{Kind: subprocess.Exited, Code: 3}
	if out.Status != runtime.StatusToolError || out.Text != "fail exited 3: broken" {
		t.Errorf("outcome %v %q", out.Status, out.Text)
	}
	if diff := cmp.Diff(want, out.Exit); diff != "" {
		t.Errorf("exit (-want +got):\n%s", diff)
	}
	var exit *subprocess.ExitError
	if !errors.As(out.Err, &exit) {
		t.Errorf("Err %T does not hold the *subprocess.ExitError", out.Err)
	}
}

func TestAuditRecordsHoldNoSecret(t *testing.T) {
	const canary = "canary-7f3a9c-SECRET"
	leaky := newProcessTool("leaky", "-stdout", "token is $TOKEN")
	fails := newProcessTool("fails", "-stderr", "failing with $TOKEN", "-exit", "4")
	leaky.env, fails.env = []string{"TOKEN=" + canary}, []string{"TOKEN=" + canary}
	var audit bytes.Buffer
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: &audit}, leaky, fails)

	ok := rt.Call(t.Context(), "leaky", contract.Call{ID: "call_1", Input: json.RawMessage(`{}`)})
	if ok.Status != runtime.StatusOK || !strings.Contains(ok.Text, canary) {
		t.Fatalf("the program did not get the secret: %v %q", ok.Status, ok.Text)
	}
	failed := rt.Call(t.Context(), "fails", contract.Call{ID: "call_2", Input: json.RawMessage(`{}`)})
	if !strings.Contains(failed.Text, canary) {
		t.Fatalf("the failing program did not print the secret: %q", failed.Text)
	}
	rt.Call(t.Context(), "leaky", contract.Call{ID: "call_3", Input: json.RawMessage(`[]`)})
	rt.Call(t.Context(), "nope", contract.Call{ID: "call_4"})

	if strings.Contains(audit.String(), canary) {
		t.Fatalf("the audit log holds the secret:\n%s", audit.String())
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d audit lines, want 6:\n%s", len(lines), audit.String())
	}
	var recs []runtime.AuditRecord
	for _, l := range lines {
		var r runtime.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line is not JSON: %v\n%s", err, l)
		}
		r.Time, r.DurationMS = time.Time{}, 0
		recs = append(recs, r)
	}
	process := contract.SideEffectProcess
	const source = "/work/.basis/tools.json"
	reason := "the test approver said allow"
	verdict := &runtime.AuditVerdict{Allow: true, Source: "approver", Reason: reason}
	leakySubject := json.RawMessage(`{"command":["helper","-stdout","token is $TOKEN"],"input":{},"tool":"leaky"}`)
	failsSubject := json.RawMessage(`{"command":["helper","-stderr","failing with $TOKEN","-exit","4"],"input":{},"tool":"fails"}`)
	// A call that ran: its start, then its end under the same call id. A
	// refused call: its end only.
	want := []runtime.AuditRecord{
		{Event: runtime.AuditStart, CallID: "call_1", Tool: "leaky", Binding: "declared", Source: source, SideEffect: &process,
			Subject: leakySubject, Verdict: verdict},
		{Event: runtime.AuditEnd, CallID: "call_1", Tool: "leaky", Binding: "declared", Source: source, SideEffect: &process,
			Subject: leakySubject, Verdict: verdict, Outcome: runtime.StatusOK},
		{Event: runtime.AuditStart, CallID: "call_2", Tool: "fails", Binding: "declared", Source: source, SideEffect: &process,
			Subject: failsSubject, Verdict: verdict},
		{Event: runtime.AuditEnd, CallID: "call_2", Tool: "fails", Binding: "declared", Source: source, SideEffect: &process,
			Subject: failsSubject, Verdict: verdict, Outcome: runtime.StatusToolError,
			Exit: &runtime.AuditExit{Kind: "exited", Code: 4}},
		{Event: runtime.AuditEnd, CallID: "call_3", Tool: "leaky", Binding: "declared", Source: source, Outcome: runtime.StatusRefused, Stage: runtime.StageInvalid,
			Refusal: "the input for leaky is invalid: the input must be a JSON object"},
		{Event: runtime.AuditEnd, CallID: "call_4", Tool: "nope", Outcome: runtime.StatusRefused, Stage: runtime.StageUnknown,
			Refusal: `there is no tool named "nope"; the tools are "fails" and "leaky"`},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

// The audit holds the subject as the bytes rules matched: a rule written
// with "&&" in it is found in the log by the same text.
func TestAuditSubjectIsTheBytesRulesMatch(t *testing.T) {
	tool := newHostTool("shell_like", contract.SideEffectProcess)
	input := json.RawMessage(`{"text":"make build && ./run < in > out"}`)
	var audit bytes.Buffer
	rule := approver.Rule{Tool: "shell_like", Pattern: `*"make build && ./run < in > out"*`, Decision: approver.RuleAllow, Source: approver.AnySource}
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Deny}, rule), Audit: &audit}, tool)
	out := rt.Call(t.Context(), "shell_like", contract.Call{ID: "c1", Input: input})
	if out.Status != runtime.StatusOK || out.Verdict.Source != approver.SourceRule {
		t.Fatalf("the rule did not match the subject: %v %q", out.Status, out.Text)
	}
	subject := `{"input":{"text":"make build && ./run < in > out"},"tool":"shell_like"}`
	if diff := cmp.Diff(subject, string(out.Preview.Subject)); diff != "" {
		t.Fatalf("subject (-want +got):\n%s", diff)
	}
	if !strings.Contains(audit.String(), `"subject":`+subject+`,`) {
		t.Errorf("the audit line does not hold the subject's bytes %s:\n%s", subject, audit.String())
	}
	if strings.Contains(audit.String(), `\u0026`) || strings.Contains(audit.String(), `\u003c`) {
		t.Errorf("the audit line escapes HTML:\n%s", audit.String())
	}
}

func TestExport(t *testing.T) {
	tool := newHostTool("upper", contract.SideEffectNone)
	tool.desc.Description = "Upper-case <text> & more."
	rt := build(t, nil, tool)
	anthropic, _ := json.Marshal(rt.AnthropicTools())
	openai, _ := json.Marshal(rt.OpenAITools())
	wantAnthropic := `[{"name":"upper","description":"Upper-case \u003ctext\u003e \u0026 more.","input_schema":` + objectSchema + `}]`
	wantOpenAI := `[{"type":"function","function":{"name":"upper","description":"Upper-case \u003ctext\u003e \u0026 more.","parameters":` + objectSchema + `}}]`
	if diff := cmp.Diff(wantAnthropic, string(anthropic)); diff != "" {
		t.Errorf("Anthropic (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantOpenAI, string(openai)); diff != "" {
		t.Errorf("OpenAI (-want +got):\n%s", diff)
	}
}

func TestStatusZeroValueIsInvalid(t *testing.T) {
	var zero runtime.Outcome
	if zero.Status == runtime.StatusOK {
		t.Fatal("an empty Outcome reads as success")
	}
	if _, err := json.Marshal(struct{ S runtime.Status }{}); err == nil {
		t.Error("the zero Status marshalled")
	}
	var s runtime.Status
	for _, text := range []string{`""`, `"invalid"`, `"OK"`, `"0"`} {
		if err := json.Unmarshal([]byte(text), &s); err == nil {
			t.Errorf("Status unmarshalled from %s as %v", text, s)
		}
	}
	for _, st := range []runtime.Status{runtime.StatusOK, runtime.StatusToolError, runtime.StatusRefused} {
		text, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var back runtime.Status
		if err := json.Unmarshal(text, &back); err != nil || back != st {
			t.Errorf("%v round-trips as %s to %v (%v)", st, text, back, err)
		}
	}
	if _, err := json.Marshal(runtime.Status("OK")); err == nil {
		t.Error("a Status that is none of the constants marshalled")
	}
}

// TestStatusAndStageSpelling: the spelling of every Status and Stage in
// an audit record and in basis call --json is the one users already read.
func TestStatusAndStageSpelling(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{runtime.StatusOK, `"ok"`},
		{runtime.StatusToolError, `"tool_error"`},
		{runtime.StatusRefused, `"refused"`},
		{runtime.StageNone, `""`},
		{runtime.StageUnknown, `"unknown"`},
		{runtime.StageInvalid, `"invalid"`},
		{runtime.StagePreview, `"preview"`},
		{runtime.StageDenied, `"denied"`},
		{runtime.StageAudit, `"audit"`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.value)
		if err != nil || string(got) != tt.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", tt.value, got, err, tt.want)
		}
		if fmt.Sprint(tt.value) != strings.Trim(tt.want, `"`) {
			t.Errorf("fmt.Sprint(%v) = %q, want the same spelling %s", tt.value, fmt.Sprint(tt.value), tt.want)
		}
	}
	var st runtime.Stage
	if err := json.Unmarshal([]byte(`"refused"`), &st); err == nil {
		t.Errorf("Stage unmarshalled from a status as %q", st)
	}
}

// A subject that is not JSON, which no binding should produce, still
// leaves the call on record, on one line.
func TestAuditKeepsAnUnreadableSubjectOnOneLine(t *testing.T) {
	tool := newHostTool("odd", contract.SideEffectNone)
	tool.preview = func(context.Context, contract.Call) (contract.Preview, error) {
		return contract.Preview{SideEffect: contract.SideEffectNone, Subject: json.RawMessage("run <this> &&\n{\"x\":1}")}, nil
	}
	var audit bytes.Buffer
	rt := build(t, &runtime.Options{Audit: &audit, OnAuditError: func(err error) { t.Errorf("audit error: %v", err) }}, tool)
	rt.Call(t.Context(), "odd", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	lines := strings.Split(strings.TrimSuffix(audit.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit log is not two lines, start and end:\n%s", audit.String())
	}
	for i, event := range []runtime.AuditEvent{runtime.AuditStart, runtime.AuditEnd} {
		var rec runtime.AuditRecord
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(`"run <this> &&\n{\"x\":1}"`, string(rec.Subject)); diff != "" || rec.Event != event {
			t.Errorf("event %v, want %v; subject (-want +got):\n%s", rec.Event, event, diff)
		}
	}
}
