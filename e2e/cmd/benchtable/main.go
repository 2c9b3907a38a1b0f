package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	root      string
	count     int
	benchtime string
	out       string
	strict    bool
	only      string
	// conformance is the output of the conformance run (e2e/cmd/conformance)
	// whose table BENCHMARKS.md carries; "" for none.
	conformance string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.root, "root", "..", "the repository's root directory")
	fs.IntVar(&o.count, "count", 3, "runs of each benchmark; the table shows their median and range")
	fs.StringVar(&o.benchtime, "benchtime", "1s", "go test -benchtime for each run")
	fs.StringVar(&o.out, "out", "", "also write the table as Markdown to this file")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 when a measured figure misses its target")
	fs.StringVar(&o.only, "only", "", "run only the rows whose module matches this regular expression")
	fs.StringVar(&o.conformance, "conformance", "", "the output of a conformance run (go run ./cmd/conformance) whose table the Markdown carries")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.count < 1 {
		fmt.Fprintln(stderr, "benchtable: -count must be at least 1")
		return 2
	}
	var only *regexp.Regexp
	if o.only != "" {
		var err error
		if only, err = regexp.Compile(o.only); err != nil {
			fmt.Fprintf(stderr, "benchtable: -only: %v\n", err)
			return 2
		}
	}

	m := describeMachine()
	started := time.Now().UTC()
	var lines []line
	goTest := onceEach(func(dir, bench string) (string, error) {
		fmt.Fprintf(stderr, "benchtable: %s: go test -bench '%s' (%d × %s)\n", dir, bench, o.count, o.benchtime)
		return runGoTest(dir, bench, o)
	})
	for _, r := range rows {
		if only != nil && !only.MatchString(r.module) {
			continue
		}
		lines = append(lines, measure(r, o.root, goTest))
	}
	m.loadAfter = loadAverage()

	printTable(stdout, lines)
	if o.out != "" {
		var conf string
		if o.conformance != "" {
			data, err := os.ReadFile(o.conformance)
			if err != nil {
				fmt.Fprintf(stderr, "benchtable: -conformance: %v\n", err)
				return 2
			}
			if conf = conformanceReport(string(data)); conf == "" {
				fmt.Fprintf(stderr, "benchtable: -conformance: %s holds no conformance table; run go run ./cmd/conformance and keep what it prints\n", o.conformance)
				return 2
			}
		}
		md := markdown(lines, m, started, "go run ./cmd/benchtable "+strings.Join(args, " "))
		md = append(md, conformanceSection(conf)...)
		if err := os.WriteFile(o.out, md, 0o644); err != nil {
			fmt.Fprintf(stderr, "benchtable: %v\n", err)
			return 1
		}
	}
	code := 0
	for _, l := range lines {
		switch {
		case l.status == statusError:
			fmt.Fprintf(stderr, "benchtable: %s could not run: %s\n", l.row.name, l.note)
			code = 1
		case l.status == statusMiss && o.strict:
			code = 1
		}
	}
	return code
}

// status is how a row ended.
type status int

const (
	statusPass        status = iota // measured, within the target
	statusMiss                      // measured, over the target
	statusNotMeasured               // the module or benchmark does not exist (yet), or skipped
	statusError                     // the benchmark failed or did not build
)

func (s status) String() string {
	return [...]string{"pass", "FAIL", "not measured", "error"}[s]
}

// line is one row of the table, measured.
type line struct {
	row           row
	status        status
	figures       []float64 // one per run
	median        float64
	lowest, worst float64
	note          string   // why a row is not measured or errored
	raw           []string // the benchmark lines the figures came from
}

// goTestFunc runs the benchmarks bench matches in the module at dir and
// returns go test's output.
type goTestFunc func(dir, bench string) (string, error)

// runGoTest runs bench in dir o.count times.
func runGoTest(dir, bench string, o options) (string, error) {
	// -v, so a skipped benchmark says why.
	cmd := exec.Command("go", "test", "-v", "-run", "^$", "-bench", bench,
		"-benchtime", o.benchtime, "-count", fmt.Sprint(o.count), "./...")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// onceEach runs f once for each directory and -bench expression: rows that
// read different figures of the same benchmark read them from the same
// runs, which are not repeated.
func onceEach(f goTestFunc) goTestFunc {
	type ran struct {
		out string
		err error
	}
	done := map[[2]string]ran{}
	return func(dir, bench string) (string, error) {
		k := [2]string{dir, bench}
		r, ok := done[k]
		if !ok {
			r.out, r.err = f(dir, bench)
			done[k] = r
		}
		return r.out, r.err
	}
}

// measure runs one row's benchmark (through goTest) and reads its figure
// from each run.
func measure(r row, root string, goTest goTestFunc) line {
	l := line{row: r}
	dir := filepath.Join(root, filepath.FromSlash(r.module))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		l.status, l.note = statusNotMeasured, "module "+r.module+" is not in this tree"
		return l
	}
	out, err := goTest(dir, r.bench)
	match := regexp.MustCompile(r.match)
	skipped := skipReason(out)
	for _, text := range strings.Split(out, "\n") {
		res, ok := parseLine(text)
		if !ok || !match.MatchString(res.name) {
			continue
		}
		if v, ok := figure(r, res); ok {
			l.figures = append(l.figures, v)
			l.raw = append(l.raw, strings.TrimSpace(text))
		}
	}
	switch {
	case err != nil:
		l.status, l.note = statusError, lastLines(out, 3)
		return l
	case len(l.figures) == 0 && skipped != "":
		l.status, l.note = statusNotMeasured, "skipped: "+skipped
		return l
	case len(l.figures) == 0:
		l.status, l.note = statusNotMeasured, "no benchmark matching "+r.match+" in "+r.module+" yet"
		return l
	}
	sorted := slices.Clone(l.figures)
	slices.Sort(sorted)
	l.median, l.lowest, l.worst = sorted[len(sorted)/2], sorted[0], sorted[len(sorted)-1]
	l.status = statusPass
	if l.median > r.target {
		l.status = statusMiss
	}
	return l
}

// skipReason returns why a benchmark in go test -v's output was skipped:
// the message logged before its "--- SKIP:" line, without the file:line
// prefix; "" when none was skipped.
func skipReason(output string) string {
	lines := strings.Split(output, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "--- SKIP:") {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, "Benchmark") || t == "" {
				break
			}
			if _, msg, ok := strings.Cut(t, ": "); ok && strings.Contains(t[:max(0, strings.Index(t, ": "))], ".go:") {
				return msg
			}
		}
		return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "--- SKIP:"))
	}
	return ""
}

// figure reads a row's figure from one benchmark line.
func figure(r row, res result) (float64, bool) {
	if r.kind == ratioKind && r.metric == "" {
		return res.ratio()
	}
	v, ok := res.metrics[r.metric]
	if r.kind == ratioKind {
		return v, ok
	}
	return v * r.scale, ok
}

// lastLines returns the last n non-empty lines of s, joined by " / ".
func lastLines(s string, n int) string {
	var kept []string
	for _, t := range strings.Split(s, "\n") {
		if t = strings.TrimSpace(t); t != "" {
			kept = append(kept, t)
		}
	}
	kept = kept[max(0, len(kept)-n):]
	return strings.Join(kept, " / ")
}

// measured is a row's figure as the table shows it.
func (l line) measured() string {
	switch l.status {
	case statusNotMeasured, statusError:
		return "—"
	}
	one := func(v float64) string {
		if l.row.kind == ratioKind {
			return fmt.Sprintf("%.2f×", v)
		}
		return fmt.Sprintf("%.1f %s", v, l.row.unit)
	}
	if len(l.figures) == 1 {
		return one(l.median)
	}
	return fmt.Sprintf("%s (%s – %s)", one(l.median), one(l.lowest), one(l.worst))
}

func (l line) target() string {
	if l.row.kind == ratioKind {
		return fmt.Sprintf("≤ %.2f×", l.row.target)
	}
	return fmt.Sprintf("≤ %g %s", l.row.target, l.row.unit)
}

func (l line) result() string {
	if l.note != "" {
		return l.status.String() + ": " + l.note
	}
	return l.status.String()
}

func printTable(w io.Writer, lines []line) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tBASELINE\tMEASURED\tTARGET\tRESULT")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.row.name, l.row.baseline, l.measured(), l.target(), l.result())
	}
	tw.Flush()
}

// machine is what the figures were measured on.
type machine struct {
	cpu, kernel, goVersion string
	cores                  int
	loadBefore, loadAfter  string
}

func describeMachine() machine {
	m := machine{cores: runtime.NumCPU(), loadBefore: loadAverage(), cpu: "unknown CPU", kernel: runtime.GOOS}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, t := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(t, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = runtime.GOOS + " " + strings.TrimSpace(string(data))
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.goVersion = strings.TrimSpace(string(out))
	}
	return m
}

// loadAverage is the 1-, 5- and 15-minute load averages, where the system
// reports them.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func markdown(lines []line, m machine, started time.Time, command string) []byte {
	var b bytes.Buffer
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Every ratio the modules promise, each measured against its baseline in the\n")
	b.WriteString("same run (alternated call by call where the benchmark says so). Written by\n")
	b.WriteString("`make bench`; do not edit by hand. Each figure is the median over the runs,\n")
	b.WriteString("with the lowest and highest in brackets. A row that says \"not measured\" has no\n")
	b.WriteString("benchmark in the tree yet: nothing is estimated.\n\n")
	fmt.Fprintf(&b, "- command: `make bench`, which runs `%s` in e2e/\n", command)
	fmt.Fprintf(&b, "- run: %s\n", started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- machine: %s, %d cores, %s; %s\n", m.cpu, m.cores, m.kernel, m.goVersion)
	fmt.Fprintf(&b, "- load average: %s before, %s after (the machine is shared; see e2e/README.md)\n\n", m.loadBefore, m.loadAfter)
	b.WriteString("| benchmark | baseline | measured | target | result | target set by |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(l.row.name), cell(l.row.baseline), cell(l.measured()), cell(l.target()), cell(l.result()), cell(l.row.source))
	}
	b.WriteString("\n## The benchmark lines\n\n")
	b.WriteString("What `go test -bench` printed for each measured row, one line per run.\n\n```\n")
	for _, l := range slices.SortedStableFunc(slices.Values(lines), func(a, b line) int { return cmp.Compare(a.row.module, b.row.module) }) {
		if len(l.raw) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# %s (%s)\n", l.row.name, l.row.module)
		for _, r := range l.raw {
			b.WriteString(r + "\n")
		}
	}
	b.WriteString("```\n")
	return b.Bytes()
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// conformanceReport is a conformance run's report, from its table on
// (the lines before say what is starting); "" when the output has none.
func conformanceReport(output string) string {
	i := strings.Index(output, "| server under test |")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(output[i:]) + "\n"
}

// conformanceSection is BENCHMARKS.md's section for the conformance table;
// none without one.
func conformanceSection(report string) []byte {
	if report == "" {
		return nil
	}
	return []byte("\n## MCP conformance\n\n" +
		"The official MCP conformance suite, `@modelcontextprotocol/conformance@0.2.0-alpha.11` (the version\n" +
		"go-sdk v1.8.0 pins), against go-sdk v1.8.0's `conformance/everything-server`, directly and through\n" +
		"`basis serve`, in both modes, then its client side with go-sdk's `everything-client` and with `basis`\n" +
		"(driven by cmd/conformanceclient). Command: `make conformance` (`go run ./cmd/conformance -root ..` in\n" +
		"e2e/), run by `make bench` before the benchmarks; what each mode means and why basis differs where it\n" +
		"does: [e2e/README.md](README.md), [conformance/baseline.yml](conformance/baseline.yml) and\n" +
		"[conformance/client-baseline.yml](conformance/client-baseline.yml).\n\n" + report)
}
