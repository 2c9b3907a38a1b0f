package main

import (
	"slices"
	"strings"
)

// outcome is how one fuzz target's run ended.
type outcome int

const (
	passed       outcome = iota // go test succeeded
	found                       // go test failed and wrote a failing input
	deadlineRace                // the coordinator's own deadline race, nothing found
	failed                      // go test failed otherwise
)

func (o outcome) String() string {
	return [...]string{"pass", "FOUND", "pass (toolchain deadline race, golang/go#75804)", "FAILED"}[o]
}

// bad reports whether the outcome fails the run.
func (o outcome) bad() bool { return o == found || o == failed }

// deadlineMessage is all go test prints for the coordinator's race.
const deadlineMessage = "context deadline exceeded"

// classify says how a target's run ended from go test's exit, the inputs
// it wrote to testdata/fuzz during the run, and its output.
func classify(ok bool, written []string, target, output string) outcome {
	switch {
	case ok:
		return passed
	case len(written) > 0:
		return found
	case onlyDeadline(target, output):
		return deadlineRace
	}
	return failed
}

// onlyDeadline reports whether output's failure report for target says
// exactly "context deadline exceeded" and nothing else: no input written,
// no test output, no second failure.
func onlyDeadline(target, output string) bool {
	lines := strings.Split(output, "\n")
	header := "--- FAIL: " + target + " ("
	var reports [][]string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], header) {
			continue
		}
		var body []string
		for i++; i < len(lines) && (strings.HasPrefix(lines[i], " ") || strings.HasPrefix(lines[i], "\t")); i++ {
			if t := strings.TrimSpace(lines[i]); t != "" {
				body = append(body, t)
			}
		}
		i--
		reports = append(reports, body)
	}
	return len(reports) == 1 && slices.Equal(reports[0], []string{deadlineMessage}) &&
		!strings.Contains(output, "Failing input written to") && !strings.Contains(output, "panic:")
}
