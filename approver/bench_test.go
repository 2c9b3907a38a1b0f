//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// benchRules makes total rules, 20 for each of total/20 tools: 8 patterns,
// 10 command rules and 2 bare rules; allow, ask and deny mixed, and a
// quarter of the command rules with alternatives. Tool names repeat across
// sources, as they do across repositories: each name has its rules bound to
// four different manifests.
func benchRules(total int) []approver.Rule {
	rules := make([]approver.Rule, 0, total)
	for tool := range total / 20 {
		name := fmt.Sprintf("tool_%d", tool/4)
		source := benchSource(tool % 4)
		for i := range 8 {
			rules = append(rules, approver.Rule{Tool: name, Pattern: fmt.Sprintf(`*"body":"make target-%d-%d*`, tool, i), Decision: benchDecision(i)})
		}
		for i := range 8 {
			r := approver.Rule{Tool: name, Command: approver.Words("make", fmt.Sprintf("target-%d", i), "*"), Decision: benchDecision(i + 1)}
			if i%4 == 0 {
				r.Command[1] = approver.CommandWord{fmt.Sprintf("target-%d", i), fmt.Sprintf("build-%d", i), "check-*"}
			}
			rules = append(rules, r)
		}
		rules = append(rules,
			approver.Rule{Tool: name, Command: []approver.CommandWord{{"go"}, {"test", "tool"}, {"*"}}, Decision: approver.RuleAllow},
			approver.Rule{Tool: name, Command: approver.Words("go", "vet", "*"), Decision: approver.RuleAllow},
			approver.Rule{Tool: name, Reason: "everything else is denied"},
			approver.Rule{Tool: name, Decision: approver.RuleAsk},
		)
		for i := range rules[len(rules)-20:] {
			rules[len(rules)-20+i].Source = source
		}
	}
	return rules
}

// benchDecision cycles through allow, ask and deny.
func benchDecision(i int) approver.RuleDecision {
	return []approver.RuleDecision{approver.RuleAllow, approver.RuleAsk, approver.RuleDeny}[i%3]
}

func benchSource(i int) string { return fmt.Sprintf("/repo%d/.basis/tools.json", i) }

// benchGate returns a gate over total rules and the name of a tool in the
// middle of them. No decision reaches the approver.
func benchGate(b *testing.B, total int) (*approver.Gate, string) {
	g, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: benchRules(total)})
	if err != nil {
		b.Fatal(err)
	}
	return g, fmt.Sprintf("tool_%d", total/160)
}

var benchPreview = contract.Preview{
	SideEffect: contract.SideEffectProcess,
	Subject:    []byte(`{"body":"go test ./... && go vet ./...","commands":[["go","test","./..."],["go","vet","./..."]],"cwd":"/repo","mode":"command","target":"local"}`),
}

// decideOnce makes one decision; every rule of the tool is looked at (the
// patterns do not match, both commands are allowed by command rules, and
// each command is checked against every command rule for a deny).
func decideOnce(b *testing.B, g *approver.Gate, tool string) time.Duration {
	start := time.Now()
	v := g.Authorize(context.Background(), approver.Request{CallID: "call", Tool: tool, Source: benchSource(2), Preview: benchPreview})
	d := time.Since(start)
	if !v.Allow || v.Source != approver.SourceRule {
		b.Fatalf("verdict = %+v", v)
	}
	return d
}

// BenchmarkGate decides one call of a tool with 20 rules among totals of
// 100 to 100,000 rules, reporting ns/op and the median of single decisions.
func BenchmarkGate(b *testing.B) {
	for _, total := range []int{100, 1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("rules=%d", total), func(b *testing.B) {
			g, tool := benchGate(b, total)
			var took []time.Duration
			for b.Loop() {
				took = append(took, decideOnce(b, g, tool))
			}
			b.ReportMetric(float64(median(took).Nanoseconds()), "median-ns")
		})
	}
}

// BenchmarkGateScaling alternates, call by call, a gate with 100 rules (the
// baseline) and one with 100,000, so both see the same machine load, and
// reports the median of each and their ratio. A gate that scanned every
// rule would show a ratio near 1000.
func BenchmarkGateScaling(b *testing.B) {
	small, smallTool := benchGate(b, 100)
	large, largeTool := benchGate(b, 100_000)
	var base, big []time.Duration
	for b.Loop() {
		base = append(base, decideOnce(b, small, smallTool))
		big = append(big, decideOnce(b, large, largeTool))
	}
	mb, ml := median(base), median(big)
	b.ReportMetric(float64(mb.Nanoseconds()), "rules100-ns")
	b.ReportMetric(float64(ml.Nanoseconds()), "rules100k-ns")
	b.ReportMetric(float64(ml)/float64(mb), "ratio-100k/100")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkGateAskOverDirect measures what the gate adds around a question
// to the approver (the goroutine, the timeout, panic recovery, checking the
// answer): a gate with no rules and AllowAll, alternated call by call with
// calling AllowAll directly, the baseline.
func BenchmarkGateAskOverDirect(b *testing.B) {
	g, err := approver.NewGate(approver.AllowAll(), &approver.GateOptions{Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := approver.Request{CallID: "call", Tool: "spawn", Preview: benchPreview}
	var gated, direct []time.Duration
	for b.Loop() {
		t0 := time.Now()
		v := g.Authorize(ctx, approver.Request{CallID: "call", Tool: "spawn", Source: approver.BuiltinSource, Preview: benchPreview})
		t1 := time.Now()
		a, err := approver.AllowAll().Approve(ctx, req)
		direct = append(direct, time.Since(t1))
		gated = append(gated, t1.Sub(t0))
		if !v.Allow || v.Source != approver.SourceApprover || err != nil || a.Decision != approver.Allow {
			b.Fatalf("verdict %+v, answer %+v %v", v, a, err)
		}
	}
	mg, md := median(gated), median(direct)
	b.ReportMetric(float64(mg.Nanoseconds()), "gate-ns")
	b.ReportMetric(float64(md.Nanoseconds()), "direct-ns")
	b.ReportMetric(float64(mg-md), "added-ns")
}

// BenchmarkGateDefinitionOverNone alternates, call by call, the benchmark
// gate whose allow rules all record a tool definition (a declared tool's,
// with a sandbox) and the same gate with rules that record none, deciding
// the same call with and without that definition, and reports the median
// of each and their ratio: what binding approvals to definitions costs a
// decision.
func BenchmarkGateDefinitionOverNone(b *testing.B) {
	def := json.RawMessage(`{"command":["./.basis/tools/make.sh"],"cwd":".","env":{"LANG":"sha256:d7ac6b1a9c24bc7e1b2a3f4c2f0b2f4e6f4a5f0c3c7a6f1e7b8d9c0a1b2c3d4e"},"files":{"/repo2/.basis/tools/make.sh":"sha256:0b8e1c8a3ad1fd4fd58e2e9a0f5a7c2b1d4e3f6a7b8c9d0e1f2a3b4c5d6e7f80"},"network":false,"program":"/repo2/.basis/tools/make.sh","sandbox":{"mode":"workspace-write","network":"none","network_cut":"namespace","write":[]},"side_effect":"process"}`)
	plain := benchRules(1_000)
	bound := benchRules(1_000)
	for i := range bound {
		if bound[i].Decision == approver.RuleAllow {
			bound[i].Definition = def
		}
	}
	gates := make([]*approver.Gate, 2)
	for i, rules := range [][]approver.Rule{plain, bound} {
		g, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: rules})
		if err != nil {
			b.Fatal(err)
		}
		gates[i] = g
	}
	tool := fmt.Sprintf("tool_%d", 1_000/160)
	decide := func(g *approver.Gate, def json.RawMessage) time.Duration {
		start := time.Now()
		v := g.Authorize(context.Background(), approver.Request{CallID: "call", Tool: tool, Source: benchSource(2), Definition: def, Preview: benchPreview})
		d := time.Since(start)
		if !v.Allow || v.Source != approver.SourceRule {
			b.Fatalf("verdict = %+v", v)
		}
		return d
	}
	var none, with []time.Duration
	for b.Loop() {
		none = append(none, decide(gates[0], nil))
		with = append(with, decide(gates[1], def))
	}
	mn, mw := median(none), median(with)
	b.ReportMetric(float64(mn.Nanoseconds()), "none-ns")
	b.ReportMetric(float64(mw.Nanoseconds()), "definition-ns")
	b.ReportMetric(float64(mw)/float64(mn), "ratio")
}
