package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Status is a check's outcome as the suite writes it in checks.json:
// SUCCESS, FAILURE, WARNING, INFO or SKIPPED. The suite's totals count
// only SUCCESS (passed) and FAILURE (failed).
type Status string

// The statuses the totals count, and the one a check gets here when a run
// did not report it at all.
const (
	Success Status = "SUCCESS"
	Failure Status = "FAILURE"
	Missing Status = "not run"
)

// Result is one suite run: each check's status by its key,
// "scenario/check-id" (with the check's name in parentheses when the
// scenario reports that id more than once).
type Result map[string]Status

// Passed and Failed count the checks as the suite's "Total:" line does.
func (r Result) Passed() int { return r.count(Success) }

// Failed counts the checks that failed.
func (r Result) Failed() int { return r.count(Failure) }

func (r Result) count(s Status) int {
	n := 0
	for _, st := range r {
		if st == s {
			n++
		}
	}
	return n
}

// timestamp ends the name the suite gives each scenario's results
// directory under --output-dir: server-<scenario>-<timestamp> for a server
// run, <scenario>-<timestamp> for a client run (a scenario named
// auth/<name> in a directory auth/).
const timestamp = `-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`

var (
	serverScenarioDir = regexp.MustCompile(`^server-(.+)` + timestamp)
	clientScenarioDir = regexp.MustCompile(`^(.+)` + timestamp)
)

// check is the part of a checks.json entry the comparison needs.
type check struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status Status `json:"status"`
}

// readResults reads a server run's --output-dir: one directory per
// scenario, each holding checks.json, a list of checks.
func readResults(dir string) (Result, error) {
	return readResultsOf(dir, serverScenarioDir)
}

// readClientResults reads a client run's --output-dir, where a scenario
// named auth/<name> has its directory in auth/.
func readClientResults(dir string) (Result, error) {
	return readResultsOf(dir, clientScenarioDir)
}

func readResultsOf(dir string, scenarioDir *regexp.Regexp) (Result, error) {
	r := Result{}
	if err := readScenarios(dir, "", scenarioDir, r); err != nil {
		return nil, err
	}
	if len(r) == 0 {
		return nil, fmt.Errorf("%s holds no scenario results", dir)
	}
	return r, nil
}

// readScenarios adds the checks of each scenario directory in dir/sub to
// r; a directory without checks.json whose name is no scenario's holds
// scenarios (auth/).
func readScenarios(dir, sub string, scenarioDir *regexp.Regexp, r Result) error {
	entries, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rel := filepath.Join(sub, e.Name())
		path := filepath.Join(dir, rel, "checks.json")
		m := scenarioDir.FindStringSubmatch(e.Name())
		if m == nil {
			if _, err := os.Stat(path); err == nil || sub != "" || scenarioDir == serverScenarioDir {
				return fmt.Errorf("%s: not a scenario's results directory (%s); has the suite's output format changed?", filepath.Join(dir, rel), scenarioDir)
			}
			if err := readScenarios(dir, rel, scenarioDir, r); err != nil {
				return err
			}
			continue
		}
		scenario := filepath.ToSlash(filepath.Join(sub, m[1]))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []check
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		ids := map[string]int{}
		for _, c := range checks {
			ids[c.ID]++
		}
		for _, c := range checks {
			if c.ID == "" || c.Status == "" {
				return fmt.Errorf("%s: a check without an id or status", path)
			}
			key := scenario + "/" + c.ID
			if ids[c.ID] > 1 {
				key += " (" + c.Name + ")"
			}
			if _, dup := r[key]; dup {
				// Not distinguishable by name either: number them in order.
				for n := 2; ; n++ {
					if _, dup := r[key+" #"+strconv.Itoa(n)]; !dup {
						key += " #" + strconv.Itoa(n)
						break
					}
				}
			}
			r[key] = c.Status
		}
	}
	return nil
}

// totalLine is the suite's own count, printed at the end of its output.
var totalLine = regexp.MustCompile(`(?m)^Total: (\d+) passed, (\d+) failed`)

// checkTotals compares the counts read from the results directory with
// the "Total:" line the suite printed, so a change in the suite's output
// format shows as an error here rather than as a wrong table.
func checkTotals(r Result, output string) error {
	m := totalLine.FindAllStringSubmatch(output, -1)
	if m == nil {
		return fmt.Errorf(`the suite printed no "Total: N passed, M failed" line`)
	}
	last := m[len(m)-1]
	passed, _ := strconv.Atoi(last[1])
	failed, _ := strconv.Atoi(last[2])
	if passed != r.Passed() || failed != r.Failed() {
		return fmt.Errorf("the suite printed %q but its results directory holds %d passed, %d failed; has its output format changed?", last[0], r.Passed(), r.Failed())
	}
	return nil
}

// Regression is a check the server passes directly and does not pass
// through basis.
type Regression struct {
	Check string
	// Basis is the check's status through basis (Missing when that run
	// did not report it).
	Basis Status
	// Reason is the baseline's reason when basis differs on purpose, else
	// empty.
	Reason string
}

// compare lists, sorted, every check direct passes that viaBasis does not,
// with the baseline's reason where it has one.
func compare(direct, viaBasis Result, baseline map[string]string) []Regression {
	var out []Regression
	for key, st := range direct {
		if st != Success {
			continue
		}
		b, ok := viaBasis[key]
		if !ok {
			b = Missing
		}
		if b != Success {
			out = append(out, Regression{Check: key, Basis: b, Reason: reasonFor(key, baseline)})
		}
	}
	slices.SortFunc(out, func(a, b Regression) int { return strings.Compare(a.Check, b.Check) })
	return out
}

// reasonFor is the baseline's reason for key: its own entry, else that
// of an entry ending in * whose text before the * begins key ("auth/*"
// stands for every check of every auth/ scenario).
func reasonFor(key string, baseline map[string]string) string {
	if r, ok := baseline[key]; ok {
		return r
	}
	for k, r := range baseline {
		if prefix, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(key, prefix) {
			return r
		}
	}
	return ""
}

// covers reports whether the baseline entry k stands for check.
func covers(k, check string) bool {
	if prefix, ok := strings.CutSuffix(k, "*"); ok {
		return strings.HasPrefix(check, prefix)
	}
	return k == check
}

// unexplained are the regressions the baseline does not list.
func unexplained(regs []Regression) []Regression {
	var out []Regression
	for _, r := range regs {
		if r.Reason == "" {
			out = append(out, r)
		}
	}
	return out
}

// stale lists, sorted, the baseline's checks that are no longer
// regressions: basis passes them now (or the direct run no longer does),
// so their entry can go.
func stale(regs []Regression, baseline map[string]string) []string {
	var out []string
	for key := range baseline {
		if !slices.ContainsFunc(regs, func(r Regression) bool { return covers(key, r.Check) }) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// readBaseline reads the checked-in baseline: for each mode, the checks
// basis fails on purpose, each with a one-line reason:
//
//	2025-11-25:
//	  scenario/check-id: why basis differs here on purpose
//	2026-07-28:
//	  scenario/check-id: why
//
// A key ending in * stands for every check it begins ("auth/*"). Blank
// lines and lines starting with # are comments. The format is this
// small subset of YAML, read here without a YAML library; anything else
// is an error naming the line.
func readBaseline(path string, modes []string) (map[string]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]string{}
	mode := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n)
		if line[0] != ' ' && line[0] != '\t' {
			m, ok := strings.CutSuffix(trimmed, ":")
			m = strings.Trim(m, `"'`)
			if !ok || !slices.Contains(modes, m) {
				return nil, fmt.Errorf("%s: want a mode, one of %s, followed by a colon; got %q", where, strings.Join(modes, ", "), trimmed)
			}
			if _, dup := out[m]; dup {
				return nil, fmt.Errorf("%s: mode %s is listed twice; keep one list per mode", where, m)
			}
			mode = m
			out[mode] = map[string]string{}
			continue
		}
		if mode == "" {
			return nil, fmt.Errorf("%s: a check before any mode; put it under its mode (%s:)", where, modes[0])
		}
		key, reason, ok := strings.Cut(trimmed, ": ")
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		reason = strings.TrimSpace(reason)
		if !ok || key == "" || reason == "" {
			return nil, fmt.Errorf("%s: want \"scenario/check-id: reason\" (one line: why basis differs here on purpose); got %q", where, trimmed)
		}
		if _, dup := out[mode][key]; dup {
			return nil, fmt.Errorf("%s: %s is listed twice under %s", where, key, mode)
		}
		out[mode][key] = reason
	}
	return out, sc.Err()
}
