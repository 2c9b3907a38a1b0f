//go:build unix

package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

var benchInput = json.RawMessage(`{"job":"deploy","params":{"branch":"main","dry_run":true}}`)

// benchRuntime is the full pipeline: a process tool running /bin/cat
// through subprocess (as a declared tool does), a gate holding 1,000 rules
// (the call is allowed by a pattern rule of its own tool's), and an audit
// log.
func benchRuntime(b *testing.B) *runtime.Runtime {
	return build(b, &runtime.Options{Gate: newGate(b, &countingApprover{decision: approver.Deny}, benchRules()...), Audit: io.Discard}, benchCat())
}

// benchCat is the process tool of benchRuntime.
func benchCat() *processTool {
	cat := newProgramTool("cat", "/bin/cat")
	cat.desc.InputSchema = json.RawMessage(`{"type": "object", "properties": {"job": {"type": "string"}, "params": {"type": "object"}}, "required": ["job"]}`)
	// The program inherits this process's environment, as exec.Command's
	// does in the baseline.
	cat.env = os.Environ()
	return cat
}

// benchRules are benchRuntime's 1,000 rules and the one that allows the
// call.
func benchRules() []approver.Rule {
	var rules []approver.Rule
	for i := range 1000 {
		tool := fmt.Sprintf("tool_%d", i%50)
		switch i % 3 {
		case 0:
			rules = append(rules, approver.Rule{Tool: tool, Pattern: fmt.Sprintf(`*"job":"job_%d"*`, i), Decision: approver.RuleAllow, Source: approver.AnySource})
		case 1:
			rules = append(rules, approver.Rule{Tool: tool, Decision: decisionOf(i%2 == 0), Source: approver.AnySource})
		default:
			rules = append(rules, approver.Rule{Tool: tool, Command: approver.Words("make", fmt.Sprint(i), "*"), Decision: approver.RuleAllow, Source: approver.AnySource})
		}
	}
	return append(rules, approver.Rule{Tool: "cat", Pattern: `*"job":"deploy"*`, Decision: approver.RuleAllow, Source: approver.AnySource})
}

func runtimeCall(b *testing.B, rt *runtime.Runtime) {
	out := rt.Call(b.Context(), "cat", contract.Call{ID: "bench", Input: benchInput})
	if out.Status != runtime.StatusOK || out.Text != string(benchInput) {
		b.Fatalf("call: %v %q", out.Status, out.Text)
	}
}

// bareCat is the baseline: the same program through a plain
// exec.Command, in a new session as subprocess starts every program (the
// kernel's cost, not the runtime's).
func bareCat(b *testing.B) {
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = bytes.NewReader(benchInput)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil || !bytes.Equal(out.Bytes(), benchInput) {
		b.Fatalf("exec: %v", err)
	}
}

// BenchmarkRuntimeCall is one call through the whole pipeline: canonical
// input, schema validation, preview, a gate with 1,000 rules, execution of
// /bin/cat, audit.
func BenchmarkRuntimeCall(b *testing.B) {
	rt := benchRuntime(b)
	for b.Loop() {
		runtimeCall(b, rt)
	}
}

// BenchmarkRuntimePipeline is BenchmarkRuntimeCall's pipeline without
// its program: the same tool, gate and audit, but Execute answers with
// the input instead of running /bin/cat. It is the runtime's own share of
// a call, in absolute time.
func BenchmarkRuntimePipeline(b *testing.B) {
	rt := build(b, &runtime.Options{Gate: newGate(b, &countingApprover{decision: approver.Deny}, benchRules()...), Audit: io.Discard}, echoTool{benchCat()})
	b.ReportAllocs()
	for b.Loop() {
		runtimeCall(b, rt)
	}
}

// echoTool is a processTool whose Execute runs nothing: it answers with
// the input.
type echoTool struct{ *processTool }

func (e echoTool) Execute(_ context.Context, call contract.Call) (contract.Result, error) {
	return contract.Result{Text: string(call.Input)}, nil
}

// BenchmarkBareExec is the baseline: the same program and input through a
// plain exec.Command.
func BenchmarkBareExec(b *testing.B) {
	for b.Loop() {
		bareCat(b)
	}
}

// BenchmarkRuntimeCallOverBareExec alternates the two call by call, so both
// see the same load, and reports each median and the overhead.
func BenchmarkRuntimeCallOverBareExec(b *testing.B) {
	rt := benchRuntime(b)
	var ours, bare []time.Duration
	for b.Loop() {
		t0 := time.Now()
		runtimeCall(b, rt)
		t1 := time.Now()
		bareCat(b)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	mo, mb := median(ours), median(bare)
	b.ReportMetric(float64(mo.Microseconds()), "runtime-µs/op")
	b.ReportMetric(float64(mb.Microseconds()), "bare-µs/op")
	b.ReportMetric(100*(float64(mo)/float64(mb)-1), "overhead-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func decisionOf(allow bool) approver.RuleDecision {
	if allow {
		return approver.RuleAllow
	}
	return approver.RuleDeny
}
