package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeScenarios writes a results directory as the suite does: one
// server-<scenario>-<timestamp> directory per scenario holding checks.json.
func writeScenarios(t *testing.T, scenarios map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, checks := range scenarios {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(checks), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadResults(t *testing.T) {
	tests := []struct {
		name      string
		scenarios map[string]string
		want      Result
		wantErr   string
	}{{
		name: "statuses by scenario and check",
		scenarios: map[string]string{
			"server-ping-2026-12-01T16-38-25-414Z": `[{"id":"ping","name":"Ping","status":"SUCCESS"},{"id":"wire-schema-valid","name":"WireSchemaValid","status":"FAILURE"}]`,
			// A scenario whose name ends in what looks like a date part.
			"server-server-sse-polling-2026-12-01T16-38-26-641Z": `[{"id":"server-sse-priming-event","status":"WARNING"},{"id":"stream-closed","status":"INFO"}]`,
		},
		want: Result{
			"ping/ping":              Success,
			"ping/wire-schema-valid": Failure,
			"server-sse-polling/server-sse-priming-event": "WARNING",
			"server-sse-polling/stream-closed":            "INFO",
		},
	}, {
		name: "an id repeated in a scenario is told apart by its name, then by number",
		scenarios: map[string]string{
			"server-http-header-validation-2026-12-01T16-38-34-001Z": `[
				{"id":"reject","name":"Missing","status":"SUCCESS"},
				{"id":"reject","name":"Mismatched","status":"FAILURE"},
				{"id":"reject","name":"Mismatched","status":"SUCCESS"},
				{"id":"other","name":"Other","status":"SUCCESS"}]`,
		},
		want: Result{
			"http-header-validation/reject (Missing)":       Success,
			"http-header-validation/reject (Mismatched)":    Failure,
			"http-header-validation/reject (Mismatched) #2": Success,
			"http-header-validation/other":                  Success,
		},
	}, {
		name:      "a directory the suite would not write",
		scenarios: map[string]string{"ping": `[]`},
		wantErr:   "not a scenario's results directory",
	}, {
		name:      "a check without a status",
		scenarios: map[string]string{"server-ping-2026-12-01T16-38-25-414Z": `[{"id":"ping"}]`},
		wantErr:   "without an id or status",
	}, {
		name:      "no results at all",
		scenarios: map[string]string{},
		wantErr:   "holds no scenario results",
	}, {
		name:      "not JSON",
		scenarios: map[string]string{"server-ping-2026-12-01T16-38-25-414Z": `{`},
		wantErr:   "checks.json",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readResults(writeScenarios(t, tt.scenarios))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readResults: got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("readResults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckTotals(t *testing.T) {
	r := Result{"a/x": Success, "a/y": Success, "b/x": Failure, "b/y": "WARNING", "c/z": "INFO"}
	tests := []struct {
		name, output, wantErr string
	}{
		{"agrees", "✓ a: 2 passed, 0 failed\n\nTotal: 2 passed, 1 failed\n\nNot scored …", ""},
		{"the last Total line counts", "Total: 9 passed, 9 failed\nTotal: 2 passed, 1 failed\n", ""},
		{"counts differ", "Total: 3 passed, 1 failed\n", "results directory holds 2 passed, 1 failed"},
		{"no Total line", "something else\n", "printed no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTotals(r, tt.output)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("checkTotals: got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	direct := Result{"a/pass": Success, "a/both-fail": Failure, "b/warn": Success, "b/gone": Success, "c/ok": Success, "d/listed": Success}
	viaBasis := Result{"a/pass": Success, "a/both-fail": Failure, "b/warn": "WARNING", "c/ok": Success, "d/listed": Failure, "e/only-basis": Success}
	baseline := map[string]string{"d/listed": "on purpose", "z/fixed": "no longer true"}
	got := compare(direct, viaBasis, baseline)
	want := []Regression{
		{Check: "b/gone", Basis: Missing},
		{Check: "b/warn", Basis: "WARNING"},
		{Check: "d/listed", Basis: Failure, Reason: "on purpose"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("compare (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], unexplained(got)); diff != "" {
		t.Errorf("unexplained (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"z/fixed"}, stale(got, baseline)); diff != "" {
		t.Errorf("stale (-want +got):\n%s", diff)
	}
}

func TestReadBaseline(t *testing.T) {
	modes := []string{"2025-11-25", "2026-07-28"}
	tests := []struct {
		name, text string
		want       map[string]map[string]string
		wantErr    string
	}{{
		name: "empty lists",
		text: "# nothing yet\n2025-11-25:\n2026-07-28:\n",
		want: map[string]map[string]string{"2025-11-25": {}, "2026-07-28": {}},
	}, {
		name: "entries with reasons, quoted or not",
		text: "2025-11-25:\n  # why\n  tools-list/tools-list: basis names tools mcp__server__tool\n\"2026-07-28\":\n  \"a/b (Name)\": reason: with a colon\n",
		want: map[string]map[string]string{
			"2025-11-25": {"tools-list/tools-list": "basis names tools mcp__server__tool"},
			"2026-07-28": {"a/b (Name)": "reason: with a colon"},
		},
	}, {
		name:    "a check without a reason",
		text:    "2025-11-25:\n  tools-list/tools-list:\n",
		wantErr: ":2: want \"scenario/check-id: reason\"",
	}, {
		name:    "an unknown mode",
		text:    "2024-01-01:\n",
		wantErr: ":1: want a mode",
	}, {
		name:    "a check before its mode",
		text:    "  a/b: reason\n",
		wantErr: "before any mode",
	}, {
		name:    "a check twice",
		text:    "2025-11-25:\n  a/b: one\n  a/b: two\n",
		wantErr: ":3: a/b is listed twice",
	}, {
		name:    "a mode twice",
		text:    "2025-11-25:\n2025-11-25:\n",
		wantErr: "listed twice; keep one list",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "baseline.yml")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readBaseline(path, modes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readBaseline: got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("readBaseline (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckedInBaselineReads keeps the baseline make conformance reads
// valid.
func TestCheckedInBaselineReads(t *testing.T) {
	var labels []string
	for _, m := range modes {
		labels = append(labels, m.Requirements)
	}
	if _, err := readBaseline(filepath.Join("..", "..", "conformance", "baseline.yml"), labels); err != nil {
		t.Fatal(err)
	}
}

func TestReport(t *testing.T) {
	rows := [2][]Result{
		{{"a/x": Success, "a/y": Success}, {"b/x": Success, "b/y": Failure}},
		{{"a/x": Success, "a/y": Failure}, {"b/x": Success}},
	}
	baseline := map[string]map[string]string{"2025-11-25": {"a/y": "on purpose", "a/z": "old"}}
	regs := [][]Regression{compare(rows[0][0], rows[1][0], baseline["2025-11-25"]), compare(rows[0][1], rows[1][1], nil)}
	want := "| server under test | 2025-11-25, stateful (`--requirements 2025-11-25`) | 2026-07-28, stateless (`--requirements 2026-07-28`) |\n" +
		"|---|---|---|\n" +
		"| everything-server directly | 2 passed, 0 failed | 1 passed, 1 failed |\n" +
		"| `basis serve --http` with everything-server as its one (stdio) MCP server, `--approve allow` | 1 passed, 1 failed | 1 passed, 0 failed |\n" +
		"\n2025-11-25, stateful: basis fails 1 check(s) the server passes directly:\n\n" +
		"- `a/y` (failure), in the baseline: on purpose\n" +
		"\nThe baseline lists, under 2025-11-25, checks basis no longer fails there; remove them: a/z\n" +
		"\n2026-07-28, stateless: basis fails 0 check(s) the server passes directly.\n"
	if diff := cmp.Diff(want, report(rows, regs, baseline)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

// A check lost in both runs counts; one lost only in the first is said to
// be flaky and does not count; one lost only in the second was not lost.
func TestCountLostTwice(t *testing.T) {
	lost := []Regression{{Check: "a/twice"}, {Check: "b/once"}}
	lostAgain := []Regression{{Check: "a/twice"}, {Check: "c/only-again"}}
	var out strings.Builder
	if n := countLostTwice(lost, lostAgain, "basis as a client", &out); n != 1 {
		t.Errorf("countLostTwice = %d, want 1", n)
	}
	want := "\nbasis as a client: `b/once` was lost in one run through basis and passed in a second: flaky, not counted\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("what it said (-want +got):\n%s", diff)
	}
}
