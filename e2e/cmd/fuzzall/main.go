package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// result is one target's run.
type result struct {
	pkg, target string
	outcome     outcome
	written     []string
	took        time.Duration
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzzall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "..", "the repository's root directory; modules are relative to it")
	fuzztime := fs.String("fuzztime", "20s", "go test -fuzztime for each target")
	minimizetime := fs.String("minimizetime", "5s", "go test -fuzzminimizetime for each target")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: fuzzall [-root DIR] [-fuzztime D] [-minimizetime D] MODULE...")
		return 2
	}
	var results []result
	bad := false
	for _, module := range fs.Args() {
		dir := filepath.Join(*root, filepath.FromSlash(module))
		pkgs, err := goLines(dir, "list", "-f", "{{.ImportPath}} {{.Dir}}", "./...")
		if err != nil {
			fmt.Fprintf(stderr, "fuzzall: %s: %v\n", module, err)
			results = append(results, result{pkg: module, target: "(go list)", outcome: failed})
			bad = true
			continue
		}
		for _, p := range pkgs {
			pkg, pkgDir, _ := strings.Cut(p, " ")
			listed, err := goLines(dir, "test", "-list", "^Fuzz", pkg)
			if err != nil {
				fmt.Fprintf(stderr, "fuzzall: %s: %v\n", pkg, err)
				results = append(results, result{pkg: pkg, target: "(go test -list)", outcome: failed})
				bad = true
				continue
			}
			for _, target := range listed {
				if !strings.HasPrefix(target, "Fuzz") {
					continue // "ok pkg", "? pkg [no test files]"
				}
				r := fuzzOne(dir, pkg, pkgDir, target, *fuzztime, *minimizetime, stdout)
				bad = bad || r.outcome.bad()
				results = append(results, r)
			}
		}
	}
	summary(stdout, results)
	if bad {
		return 1
	}
	return 0
}

// fuzzOne runs one target, printing go test's output as it comes.
func fuzzOne(dir, pkg, pkgDir, target, fuzztime, minimizetime string, stdout io.Writer) result {
	fmt.Fprintf(stdout, "== %s %s\n", pkg, target)
	corpus := filepath.Join(pkgDir, "testdata", "fuzz", target)
	before := files(corpus)
	cmd := exec.Command("go", "test", "-run", "^$", "-fuzz", "^"+target+"$",
		"-fuzztime", fuzztime, "-fuzzminimizetime", minimizetime, pkg)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(stdout, &out)
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	err := cmd.Run()
	var written []string
	for _, f := range files(corpus) {
		if !slices.Contains(before, f) {
			written = append(written, filepath.Join(corpus, f))
		}
	}
	r := result{pkg: pkg, target: target, written: written, took: time.Since(start)}
	r.outcome = classify(err == nil, written, target, out.String())
	if r.outcome == deadlineRace {
		fmt.Fprintf(stdout, "fuzzall: %s: go test's only complaint is its own -fuzztime deadline (golang/go#75804), and it wrote no input: not a finding\n", target)
	}
	return r
}

// files lists the names in dir; none when it does not exist.
func files(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// goLines runs the go command in dir and returns its output's lines.
func goLines(dir string, args ...string) ([]string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("go %s: %w", strings.Join(args, " "), err), errors.New(strings.TrimSpace(stderr.String()+string(out))))
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

func summary(w io.Writer, results []result) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tTARGET\tRESULT\tTIME")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.pkg, r.target, r.outcome, r.took.Round(time.Second))
		for _, f := range r.written {
			fmt.Fprintf(tw, "\t\tinput written: %s\t\n", f)
		}
	}
	tw.Flush()
}
