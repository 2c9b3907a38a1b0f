package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
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
	}
}

func TestInvalidInputNeverReachesThePreview(t *testing.T) {
	tool := newHostTool("echo", contract.SideEffectProcess)
	appr := &countingApprover{decision: approver.Allow}
	rt := build(t, &runtime.Options{Gate: newGate(t, appr)}, tool)
	tests := []struct {
		input string
		says  string
	}{
		{`{"text": 7}`, "/text"},
		{`{}`, "text"},
		{`{"text": "x", "extra": 1}`, "extra"},
		{`not json`, "JSON"},
		{`["text"]`, "object"},
	}
	for _, tt := range tests {
		out := rt.Call(t.Context(), "echo", contract.Call{Input: json.RawMessage(tt.input)})
		if out.Status != runtime.StatusRefused || out.Stage != runtime.StageInvalid {
			t.Errorf("%s: %v/%v %q, want refused as invalid", tt.input, out.Status, out.Stage, out.Text)
		}
		if !strings.HasPrefix(out.Text, "the input for echo does not match its schema: ") || !strings.Contains(out.Text, tt.says) {
			t.Errorf("%s: text %q should name %q", tt.input, out.Text, tt.says)
		}
	}
	if n := tool.previews.Load() + tool.executes.Load() + appr.asked.Load(); n != 0 {
		t.Errorf("invalid input reached the preview, the approver or the tool %d times", n)
	}
}

func TestInvalidInputNeverStartsADeclaredProgram(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "ran")
	writeScript(t, filepath.Join(root, "tool.sh"), "touch "+marker+"\n")
	writeManifest(t, root, `{"schema": 1, "tools": {"job": {
		"description": "Run a job.",
		"input_schema": {"type": "object", "properties": {"job": {"type": "string"}}, "required": ["job"]},
		"command": ["./tool.sh"]}}}`)
	rt := build(t, &runtime.Options{Gate: newGate(t, approver.AllowAll)}, loadDeclared(t, root)...)
	out := rt.Call(t.Context(), "job", contract.Call{Input: json.RawMessage(`{"job": 12}`)})
	if out.Stage != runtime.StageInvalid || !strings.Contains(out.Text, "/job") {
		t.Errorf("outcome %v %q", out.Stage, out.Text)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran on invalid input")
	}
	out = rt.Call(t.Context(), "job", contract.Call{Input: json.RawMessage(`{"job": "build"}`)})
	if out.Status != runtime.StatusOK {
		t.Fatalf("valid call: %v %q", out.Status, out.Text)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the program did not run on valid input")
	}
}

func TestApprovalOrder(t *testing.T) {
	denyRule := approver.Rule{Tool: "write", Allow: false, Reason: "writes are off today"}
	allowRule := approver.Rule{Tool: "allowed", Allow: true}
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
		{"a deny rule answers first", newHostTool("write", contract.SideEffectProcess), approver.Allow, runtime.StatusRefused, approver.SourceRule, 0, 0, "writes are off today"},
		{"an allow rule answers first", newHostTool("allowed", contract.SideEffectExternal), approver.Deny, runtime.StatusOK, approver.SourceRule, 0, 1, "allowed ran"},
		{"then the approver: allow", newHostTool("other", contract.SideEffectProcess), approver.Allow, runtime.StatusOK, approver.SourceApprover, 1, 1, "other ran"},
		{"then the approver: deny", newHostTool("other", contract.SideEffectProcess), approver.Deny, runtime.StatusRefused, approver.SourceApprover, 1, 0, "the test approver said deny"},
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
	tool := newHostTool("picky", contract.SideEffectProcess)
	tool.preview = func(context.Context, contract.Call) (contract.Preview, error) {
		return contract.Preview{}, errors.New("picky refuses: use the other door")
	}
	appr := &countingApprover{decision: approver.Allow}
	rt := build(t, &runtime.Options{Gate: newGate(t, appr)}, tool)
	out := rt.Call(t.Context(), "picky", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Stage != runtime.StagePreview || out.Text != "picky refuses: use the other door" || appr.asked.Load() != 0 || tool.executes.Load() != 0 {
		t.Errorf("outcome %v %q, asked %d, ran %d", out.Stage, out.Text, appr.asked.Load(), tool.executes.Load())
	}
}

func TestPanickingToolIsAToolError(t *testing.T) {
	tool := newHostTool("boom", contract.SideEffectNone)
	tool.execute = func(context.Context, contract.Call) (contract.Result, error) { panic("kaboom") }
	previewPanics := newHostTool("boom_preview", contract.SideEffectNone)
	previewPanics.preview = func(context.Context, contract.Call) (contract.Preview, error) { panic("kaboom") }
	rt := build(t, nil, tool, previewPanics)
	out := rt.Call(t.Context(), "boom", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Status != runtime.StatusToolError || !strings.Contains(out.Text, "panicked") {
		t.Errorf("panicking Execute: %v %q", out.Status, out.Text)
	}
	out = rt.Call(t.Context(), "boom_preview", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Stage != runtime.StagePreview || !strings.Contains(out.Text, "panicked") {
		t.Errorf("panicking preview: %v %q", out.Stage, out.Text)
	}
}

func TestToolTimeout(t *testing.T) {
	slow := newHostTool("slow", contract.SideEffectNone)
	slow.desc.Timeout = 50 * time.Millisecond
	slow.execute = func(ctx context.Context, _ contract.Call) (contract.Result, error) {
		<-ctx.Done()
		return contract.Result{}, errors.New("slow was stopped: " + ctx.Err().Error())
	}
	rt := build(t, &runtime.Options{DefaultTimeout: time.Hour}, slow)
	out := rt.Call(t.Context(), "slow", contract.Call{Input: json.RawMessage(`{"text":"x"}`)})
	if out.Status != runtime.StatusToolError || !strings.Contains(out.Text, "deadline exceeded") {
		t.Errorf("outcome %v %q", out.Status, out.Text)
	}
}

func TestFailedProgramCarriesItsExit(t *testing.T) {
	root := t.TempDir()
	writeScript(t, filepath.Join(root, "fail.sh"), "echo broken >&2\nexit 3\n")
	writeManifest(t, root, `{"schema": 1, "tools": {"fail": {
		"description": "Fail.", "input_schema": {"type": "object"}, "command": ["./fail.sh"]}}}`)
	rt := build(t, &runtime.Options{Gate: newGate(t, approver.AllowAll)}, loadDeclared(t, root)...)
	out := rt.Call(t.Context(), "fail", contract.Call{Input: json.RawMessage(`{}`)})
	want := &subprocess.Outcome{Kind: subprocess.Exited, Code: 3}
	if out.Status != runtime.StatusToolError || !strings.Contains(out.Text, "broken") {
		t.Errorf("outcome %v %q", out.Status, out.Text)
	}
	if diff := cmp.Diff(want, out.Exit); diff != "" {
		t.Errorf("exit (-want +got):\n%s", diff)
	}
}

func TestAuditRecordsHoldNoSecret(t *testing.T) {
	const canary = "canary-7f3a9c-SECRET"
	root := t.TempDir()
	writeScript(t, filepath.Join(root, "tool.sh"), `cat >/dev/null; echo "token is $TOKEN and arg $1"`+"\n")
	writeScript(t, filepath.Join(root, "fail.sh"), `echo "failing with $TOKEN" >&2; exit 4`+"\n")
	writeManifest(t, root, `{"schema": 1, "tools": {
		"leaky": {"description": "Prints its secret.", "input_schema": {"type": "object"},
			"command": ["./tool.sh", "Authorization: ${API_TOKEN}"], "env": {"TOKEN": "${API_TOKEN}"}},
		"fails": {"description": "Fails loudly.", "input_schema": {"type": "object"},
			"command": ["./fail.sh", "${API_TOKEN}"], "env": {"TOKEN": "${API_TOKEN}"}}}}`)
	tools := loadDeclared(t, root, "API_TOKEN="+canary)
	var audit bytes.Buffer
	rt := build(t, &runtime.Options{Gate: newGate(t, approver.AllowAll), Audit: &audit}, tools...)

	ok := rt.Call(t.Context(), "leaky", contract.Call{ID: "call_1", Input: json.RawMessage(`{}`)})
	if ok.Status != runtime.StatusOK || !strings.Contains(ok.Text, canary) {
		t.Fatalf("the program did not get the secret: %v %q", ok.Status, ok.Text)
	}
	rt.Call(t.Context(), "fails", contract.Call{ID: "call_2", Input: json.RawMessage(`{}`)})
	rt.Call(t.Context(), "leaky", contract.Call{ID: "call_3", Input: json.RawMessage(`[]`)})
	rt.Call(t.Context(), "nope", contract.Call{ID: "call_4"})

	if strings.Contains(audit.String(), canary) {
		t.Fatalf("the audit log holds the secret:\n%s", audit.String())
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d audit lines, want 4:\n%s", len(lines), audit.String())
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
	source := filepath.Join(root, ".basis", "tools.json")
	want := []runtime.AuditRecord{
		{CallID: "call_1", Tool: "leaky", Binding: "declared", Source: source, SideEffect: &process,
			Subject: json.RawMessage(`{"command":["./tool.sh","Authorization: ${API_TOKEN}"],"cwd":".","input":{},"tool":"leaky"}`),
			Verdict: &runtime.AuditVerdict{Allow: true, Source: "approver", Reason: recs[0].Verdict.Reason}, Outcome: runtime.StatusOK},
		{CallID: "call_2", Tool: "fails", Binding: "declared", Source: source, SideEffect: &process,
			Subject: json.RawMessage(`{"command":["./fail.sh","${API_TOKEN}"],"cwd":".","input":{},"tool":"fails"}`),
			Verdict: &runtime.AuditVerdict{Allow: true, Source: "approver", Reason: recs[1].Verdict.Reason}, Outcome: runtime.StatusToolError,
			Exit: &runtime.AuditExit{Kind: "exited", Code: 4}},
		{CallID: "call_3", Tool: "leaky", Binding: "declared", Source: source, Outcome: runtime.StatusRefused, Stage: runtime.StageInvalid,
			Refusal: recs[2].Refusal},
		{CallID: "call_4", Tool: "nope", Outcome: runtime.StatusRefused, Stage: runtime.StageUnknown,
			Refusal: `there is no tool named "nope"; the tools are "fails" and "leaky"`},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
	if !strings.Contains(recs[2].Refusal, "the input for leaky does not match its schema") {
		t.Errorf("refusal %q", recs[2].Refusal)
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
