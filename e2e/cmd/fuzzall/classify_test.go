package main

import (
	"strings"
	"testing"
)

// raceOutput is what go1.26 printed for FuzzAnalyzeCommands in a make
// fuzz run here: the coordinator's deadline race, nothing found.
const raceOutput = `fuzz: elapsed: 0s, gathering baseline coverage: 0/283 completed
fuzz: elapsed: 3s, execs: 29673 (9880/sec), new interesting: 39 (total: 322)
fuzz: elapsed: 6s, execs: 59537 (0/sec), new interesting: 47 (total: 330)
--- FAIL: FuzzAnalyzeCommands (6.04s)
    context deadline exceeded
FAIL
exit status 1
FAIL	github.com/basis-go/basis/spawn	6.068s
`

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		ok      bool
		written []string
		output  string
		want    outcome
	}{
		{"pass", true, nil, "PASS\nok  \tpkg\t6.0s\n", passed},
		{"the deadline race", false, nil, raceOutput, deadlineRace},
		{"a finding", false, []string{"testdata/fuzz/FuzzAnalyzeCommands/0a1b"}, `--- FAIL: FuzzAnalyzeCommands (0.31s)
    --- FAIL: FuzzAnalyzeCommands (0.00s)
        analyze_test.go:170: analysis of "x" disagrees
    Failing input written to testdata/fuzz/FuzzAnalyzeCommands/0a1b
FAIL
`, found},
		// A finding is a finding even if the output also says deadline.
		{"input written beside the deadline", false, []string{"testdata/fuzz/FuzzX/1"}, strings.ReplaceAll(raceOutput, "FuzzAnalyzeCommands", "FuzzX"), found},
		{"the deadline and something else", false, nil, `--- FAIL: FuzzAnalyzeCommands (6.04s)
    context deadline exceeded
    fuzzing process hung or terminated unexpectedly: exit status 2
FAIL
`, failed},
		{"a worker killed, no input", false, nil, `--- FAIL: FuzzAnalyzeCommands (3.00s)
    fuzzing process terminated by unexpected signal; no crash will be recorded: signal: killed
FAIL
`, failed},
		{"a panic before fuzzing", false, nil, "panic: boom\n--- FAIL: FuzzAnalyzeCommands (0.00s)\n    context deadline exceeded\nFAIL\n", failed},
		{"a build error", false, nil, "# pkg\n./x.go:1:1: syntax error\nFAIL\tpkg [build failed]\n", failed},
		{"another target's race", false, nil, strings.ReplaceAll(raceOutput, "FuzzAnalyzeCommands", "FuzzParse"), failed},
	}
	for _, tt := range tests {
		if got := classify(tt.ok, tt.written, "FuzzAnalyzeCommands", tt.output); got != tt.want {
			t.Errorf("%s: classify = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzOnlyDeadline(f *testing.F) {
	f.Add(raceOutput)
	f.Add("--- FAIL: FuzzAnalyzeCommands (1s)\n\tcontext deadline exceeded\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, output string) {
		if !onlyDeadline("FuzzAnalyzeCommands", output) {
			return
		}
		// Whatever else it holds, output it accepts names the target's
		// failure once and the deadline as its only complaint.
		headers := 0
		for _, line := range strings.Split(output, "\n") {
			if strings.HasPrefix(line, "--- FAIL: FuzzAnalyzeCommands (") {
				headers++
			}
		}
		if headers != 1 || !strings.Contains(output, deadlineMessage) {
			t.Fatalf("onlyDeadline accepted %q", output)
		}
		if strings.Contains(output, "Failing input written to") || strings.Contains(output, "panic:") {
			t.Fatalf("onlyDeadline accepted a finding: %q", output)
		}
	})
}
