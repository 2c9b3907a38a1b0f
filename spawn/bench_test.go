//go:build unix

package spawn_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/basis-go/basis/spawn"
)

// typicalInputs are what models write most: single commands, short chains,
// quoting, and a body that cannot be analysed.
var typicalInputs = []string{
	"!go test ./...",
	"!go test ./... && go vet ./...",
	"!git log --oneline -n 20 | head -5",
	`!grep -rn "TODO" --include '*.go' .`,
	"!cd internal/parser && go test -run 'TestParse.*' -count=1 ./...",
	"!go build ./... 2>&1 | tee /dev/null",
	"!echo $(git rev-parse HEAD)",
}

func parseAndAnalyze(b *testing.B, input string) {
	in, err := spawn.Parse(input)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = spawn.AnalyzeCommands(in.Body)
}

func bareShellParse(b *testing.B, input string) {
	if _, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(input[1:]), ""); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkParseAndAnalyze is the edge parse plus the static analysis of a
// typical input, one input per operation.
func BenchmarkParseAndAnalyze(b *testing.B) {
	i := 0
	for b.Loop() {
		parseAndAnalyze(b, typicalInputs[i%len(typicalInputs)])
		i++
	}
}

// BenchmarkAnalyzeOverShellParse alternates Parse+AnalyzeCommands with the
// baseline of parsing the same body with mvdan.cc/sh alone, and reports
// the median of each and the overhead of everything spawn adds to the
// shell parse.
func BenchmarkAnalyzeOverShellParse(b *testing.B) {
	var ours, bare []time.Duration
	i := 0
	for b.Loop() {
		input := typicalInputs[i%len(typicalInputs)]
		i++
		t0 := time.Now()
		parseAndAnalyze(b, input)
		t1 := time.Now()
		bareShellParse(b, input)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	report(b, ours, bare, "analyze-ns/op", "shellparse-ns/op", time.Nanosecond)
}

func benchTool(b *testing.B) *spawn.Tool {
	tool, err := spawn.New(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return tool
}

const benchBody = "echo ok"

func runCommand(b *testing.B, tool *spawn.Tool) {
	res, err := tool.Execute(context.Background(), call("!"+benchBody))
	if err != nil || res.Text != "ok" {
		b.Fatalf("Execute: %q, %v", res.Text, err)
	}
}

// bareShell is the baseline: the same body through a plain exec.Command,
// in a new session as subprocess starts every program (the kernel's cost,
// not spawn's).
func bareShell(b *testing.B, dir string) {
	cmd := exec.Command("/bin/sh", "-c", benchBody)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil || out.String() != "ok\n" {
		b.Fatalf("exec: %q, %v", out.String(), err)
	}
}

// BenchmarkCommand is one local command call through the whole tool:
// decode, parse, refusal checks, environment, subprocess, result text.
func BenchmarkCommand(b *testing.B) {
	tool := benchTool(b)
	for b.Loop() {
		runCommand(b, tool)
	}
}

// BenchmarkBareShell is the baseline: the same body through a plain
// exec.Command("/bin/sh", "-c", ...).
func BenchmarkBareShell(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		bareShell(b, dir)
	}
}

// BenchmarkCommandOverBareShell alternates the two, call by call, so both
// see the same machine load, and reports the median of each and their
// ratio as "overhead-%".
func BenchmarkCommandOverBareShell(b *testing.B) {
	tool := benchTool(b)
	dir := b.TempDir()
	var ours, bare []time.Duration
	for b.Loop() {
		t0 := time.Now()
		runCommand(b, tool)
		t1 := time.Now()
		bareShell(b, dir)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	report(b, ours, bare, "spawn-µs/op", "bare-µs/op", time.Microsecond)
}

// report adds the medians of ours and bare, in unit, and the overhead of
// ours over bare in percent.
func report(b *testing.B, ours, bare []time.Duration, oursName, bareName string, unit time.Duration) {
	mo, mb := median(ours), median(bare)
	b.ReportMetric(float64(mo)/float64(unit), oursName)
	b.ReportMetric(float64(mb)/float64(unit), bareName)
	b.ReportMetric(100*(float64(mo)/float64(mb)-1), "overhead-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
