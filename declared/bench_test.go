//go:build unix

package declared_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/subprocess"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// benchPayload is the same small object subprocess's benchmarks use.
var benchPayload = `{"job":"deploy","params":{"branch":"main","dry_run":true}}`

// benchCatTool loads a tool that runs /bin/cat, with a schema the payload
// is validated against on every call.
func benchCatTool(b *testing.B) *declared.Tool {
	b.Helper()
	root := workspace(b, `{"schema": 1, "tools": {"cat": {
	  "description": "Echo the input.",
	  "input_schema": {"type": "object", "required": ["job"], "properties": {
	    "job": {"type": "string", "minLength": 1},
	    "params": {"type": "object", "properties": {"branch": {"type": "string"}, "dry_run": {"type": "boolean"}}}
	  }},
	  "command": ["/bin/cat"]
	}}}`)
	// Environ nil: the inherited environment, as exec.Command's child gets.
	return loadTool(b, root, nil, "cat")
}

func declaredCat(b *testing.B, tool *declared.Tool) {
	res, err := tool.Execute(context.Background(), contract.Call{ID: "bench", Input: []byte(benchPayload)})
	if err != nil || res.Text != benchPayload {
		b.Fatalf("Execute: %q, %v", res.Text, err)
	}
}

// bareCat is the baseline: the same program through a plain
// exec.Command, in a new session as subprocess starts every program (the
// kernel's cost, not this package's).
func bareCat(b *testing.B) {
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = strings.NewReader(benchPayload)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil || out.String() != benchPayload {
		b.Fatalf("exec: %v", err)
	}
}

// BenchmarkDeclaredCall executes a loaded /bin/cat tool with a small
// object: input validation against the schema, then the run.
func BenchmarkDeclaredCall(b *testing.B) {
	tool := benchCatTool(b)
	for b.Loop() {
		declaredCat(b, tool)
	}
}

// BenchmarkBareExec is the baseline: the same program and payload through
// a plain exec.Command.
func BenchmarkBareExec(b *testing.B) {
	for b.Loop() {
		bareCat(b)
	}
}

// BenchmarkDeclaredCallOverBareExec alternates the two, call by call, so
// both see the same machine load, and reports the median of each and the
// overhead of a declared call over bare exec ("overhead-%", the figure the
// README quotes; the target is at most 15).
func BenchmarkDeclaredCallOverBareExec(b *testing.B) {
	tool := benchCatTool(b)
	var ours, bare []time.Duration
	for b.Loop() {
		t0 := time.Now()
		declaredCat(b, tool)
		t1 := time.Now()
		bareCat(b)
		ours = append(ours, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	mo, mb := median(ours), median(bare)
	b.ReportMetric(float64(mo.Microseconds()), "declared-µs/op")
	b.ReportMetric(float64(mb.Microseconds()), "bare-µs/op")
	b.ReportMetric(100*(float64(mo)/float64(mb)-1), "overhead-%")
}

// BenchmarkDeclaredCallOverRun alternates a declared call with
// subprocess.Run of the same command, environment and payload, so the
// figure is this package's own share of the overhead: input validation
// and building the command ("overhead-%").
func BenchmarkDeclaredCallOverRun(b *testing.B) {
	tool := benchCatTool(b)
	cmd := &subprocess.Cmd{Argv: []string{"/bin/cat"}, Env: os.Environ(), Stdin: []byte(benchPayload), Timeout: declared.DefaultTimeout, KeepRunningPastLimit: true}
	var ours, run []time.Duration
	for b.Loop() {
		t0 := time.Now()
		declaredCat(b, tool)
		t1 := time.Now()
		res, err := subprocess.Run(context.Background(), cmd)
		if err != nil || string(res.Stdout) != benchPayload {
			b.Fatalf("Run: %v", err)
		}
		ours = append(ours, t1.Sub(t0))
		run = append(run, time.Since(t1))
	}
	mo, mr := median(ours), median(run)
	b.ReportMetric(float64(mo.Microseconds()), "declared-µs/op")
	b.ReportMetric(float64(mr.Microseconds()), "run-µs/op")
	b.ReportMetric(100*(float64(mo)/float64(mr)-1), "overhead-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// load1000Manifest is a manifest of 1,000 tools, each with a small schema
// of its own, placeholders and an env entry; schemas holds the schemas.
func load1000Manifest() (manifest string, schemas []string) {
	var sb strings.Builder
	sb.WriteString(`{"schema": 1, "tools": {`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		schema := fmt.Sprintf(`{"type": "object", "required": ["job"], "properties": {"job": {"type": "string", "maxLength": %d}, "count": {"type": "integer", "minimum": 1}}}`, i+1)
		schemas = append(schemas, schema)
		fmt.Fprintf(&sb, `
	  "tool_%04d": {
	    "description": "Tool number %d.",
	    "input_schema": %s,
	    "command": ["./.basis/tools/t%d", "--url", "${BENCH_URL:-https://ci.example}"],
	    "env": {"TOKEN": "${BENCH_TOKEN:-none}"},
	    "side_effect": "external",
	    "timeout_ms": 30000
	  }`, i, i, schema, i)
	}
	sb.WriteString("}}")
	return sb.String(), schemas
}

// BenchmarkLoad1000 loads a manifest of 1,000 tools (target: under
// 100 ms).
func BenchmarkLoad1000(b *testing.B) {
	manifest, _ := load1000Manifest()
	root := workspace(b, manifest)
	cpuBefore := cpuTime(b)
	for b.Loop() {
		load1000(b, root)
	}
	// Wall time depends on what else the machine runs; the process's CPU
	// time says what loading itself costs.
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64((cpuTime(b)-cpuBefore).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkLoad1000OneLine alternates loading the 1,000-tool manifest as
// written (a tool's entry over several lines) with the same manifest on
// one line, as a program may write it, and reports their medians and
// ratio: where each problem and each tool's command lie is worked out as
// a line and a column, and that must not cost more on a long line.
func BenchmarkLoad1000OneLine(b *testing.B) {
	manifest, _ := load1000Manifest()
	lines, oneLine := workspace(b, manifest), workspace(b, strings.ReplaceAll(manifest, "\n", " "))
	var multi, single []time.Duration
	for b.Loop() {
		began := time.Now()
		load1000(b, lines)
		multi = append(multi, time.Since(began))
		began = time.Now()
		load1000(b, oneLine)
		single = append(single, time.Since(began))
	}
	m, o := median(multi), median(single)
	b.ReportMetric(float64(m.Microseconds())/1000, "lines-ms/op")
	b.ReportMetric(float64(o.Microseconds())/1000, "one-line-ms/op")
	b.ReportMetric(float64(o)/float64(m), "ratio")
}

// BenchmarkLoad1000OverCompile alternates loading the 1,000-tool manifest
// with the baseline: jsonschema/v6 compiling the same 1,000 schemas, one
// after another, and nothing else. "overhead-%" is what loading costs
// beyond compiling the schemas it must compile.
func BenchmarkLoad1000OverCompile(b *testing.B) {
	manifest, schemas := load1000Manifest()
	root := workspace(b, manifest)
	var loads, compiles []time.Duration
	for b.Loop() {
		t0 := time.Now()
		load1000(b, root)
		t1 := time.Now()
		for _, schema := range schemas {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
			if err != nil {
				b.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("urn:bench", doc); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Compile("urn:bench"); err != nil {
				b.Fatal(err)
			}
		}
		loads = append(loads, t1.Sub(t0))
		compiles = append(compiles, time.Since(t1))
	}
	ml, mc := median(loads), median(compiles)
	b.ReportMetric(float64(ml.Microseconds())/1000, "load-ms/op")
	b.ReportMetric(float64(mc.Microseconds())/1000, "compile-ms/op")
	b.ReportMetric(100*(float64(ml)/float64(mc)-1), "overhead-%")
}

func load1000(b *testing.B, root string) {
	tools, err := declared.Load(context.Background(), root, nil)
	if err != nil || len(tools) != 1000 {
		b.Fatalf("Load: %d tools, %v", len(tools), err)
	}
}

// cpuTime is the CPU time, user and system, this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDefinitionOverCall measures what pinning a program costs: a
// call whose approval first reads the tool's definition — the SHA-256 of
// its program file in the workspace, hashed at every call — against the
// same call without, alternated call by call ("ratio"). The program is a
// script in the workspace that execs /bin/cat: a small one, and one of
// 8 MiB (a large program built in the workspace), each just written (so
// hashed at every call) and settled (changed long ago: its hash is
// remembered while its size and times stay).
func BenchmarkDefinitionOverCall(b *testing.B) {
	for _, tc := range []struct {
		size    int
		settled bool
	}{{64, false}, {8 << 20, false}, {64, true}, {8 << 20, true}} {
		size := tc.size
		name := fmt.Sprintf("program=%dB/fresh", size)
		if tc.settled {
			name = fmt.Sprintf("program=%dB/settled", size)
		}
		b.Run(name, func(b *testing.B) {
			if tc.settled {
				defer declared.SettleFileHashes()()
			}
			root := workspace(b, `{"schema": 1, "tools": {"cat": {
			  "description": "Echo the input.", "input_schema": {"type": "object"},
			  "command": ["./cat.sh"]}}}`)
			body := "#!/bin/sh\nexec /bin/cat\n"
			body += "#" + strings.Repeat("x", max(0, size-len(body)-2)) + "\n"
			writeFile(b, root, "cat.sh", body, 0o755)
			tool := loadTool(b, root, nil, "cat")
			var with, without []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := tool.Definition(context.Background()); err != nil {
					b.Fatal(err)
				}
				declaredCat(b, tool)
				t1 := time.Now()
				declaredCat(b, tool)
				with = append(with, t1.Sub(t0))
				without = append(without, time.Since(t1))
			}
			mw, mo := median(with), median(without)
			b.ReportMetric(float64(mw.Microseconds()), "with-µs/op")
			b.ReportMetric(float64(mo.Microseconds()), "without-µs/op")
			b.ReportMetric(float64(mw)/float64(mo), "ratio")
		})
	}
}

// BenchmarkDefinition is the definition alone, for a small script in the
// workspace: resolving the program, hashing it, encoding.
func BenchmarkDefinition(b *testing.B) {
	root := workspace(b, `{"schema": 1, "tools": {"cat": {
	  "description": "Echo the input.", "input_schema": {"type": "object"},
	  "command": ["./cat.sh", "--fast"], "env": {"LANG": "C"}}}}`)
	writeFile(b, root, "cat.sh", "#!/bin/sh\nexec /bin/cat\n", 0o755)
	tool := loadTool(b, root, nil, "cat")
	for b.Loop() {
		if _, err := tool.Definition(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
