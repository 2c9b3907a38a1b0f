//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A client run's results: <scenario>-<timestamp> directories, the auth/
// scenarios in auth/.
func TestReadClientResults(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // path under the results directory: checks.json
		want    Result
		wantErr bool
	}{{
		name: "top-level and auth/ scenarios",
		files: map[string]string{
			"initialize-2026-12-01T19-27-26-699Z/checks.json":            `[{"id":"client-initialize","name":"Init","status":"SUCCESS"}]`,
			"auth/metadata-default-2026-12-01T19-27-26-702Z/checks.json": `[{"id":"prm-discovery","status":"FAILURE"},{"id":"pkce","status":"SUCCESS"}]`,
		},
		want: Result{
			"initialize/client-initialize":        Success,
			"auth/metadata-default/prm-discovery": Failure,
			"auth/metadata-default/pkce":          Success,
		},
	}, {
		name:    "a directory nested deeper than auth/ is a changed format",
		files:   map[string]string{"auth/x/y-2026-12-01T19-27-26-702Z/checks.json": `[]`},
		wantErr: true,
	}, {
		name:    "a scenario directory without a timestamp is a changed format",
		files:   map[string]string{"initialize/checks.json": `[{"id":"a","status":"SUCCESS"}]`},
		wantErr: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for path, data := range tt.files {
				p := filepath.Join(dir, path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readClientResults(dir)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readClientResults: %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("readClientResults (-want +got):\n%s", diff)
			}
		})
	}
}

// A baseline key ending in * covers every check it begins; it is stale
// only when it covers none.
func TestCompareWithWildcards(t *testing.T) {
	ref := Result{"auth/a/x": Success, "auth/b/y": Success, "tools/z": Success, "other/w": Success}
	basis := Result{"auth/a/x": Failure, "tools/z": Failure, "other/w": Success}
	baseline := map[string]string{"auth/*": "no sign-in yet", "gone/*": "fixed", "tools/z": "on purpose"}
	got := compare(ref, basis, baseline)
	want := []Regression{
		{Check: "auth/a/x", Basis: Failure, Reason: "no sign-in yet"},
		{Check: "auth/b/y", Basis: Missing, Reason: "no sign-in yet"},
		{Check: "tools/z", Basis: Failure, Reason: "on purpose"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("compare (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gone/*"}, stale(got, baseline)); diff != "" {
		t.Errorf("stale (-want +got):\n%s", diff)
	}
	report := clientReport([2]clientRow{
		{Name: "ref", Result: ref, Took: 3 * time.Second},
		{Name: "basis", Result: basis, Took: 1500 * time.Millisecond},
	}, got, baseline)
	wantReport := "| client under test (`conformance client --suite all`) | passed | failed | took |\n|---|---|---|---|\n" +
		"| ref | 4 | 0 | 3.0 s |\n| basis | 1 | 2 | 1.5 s |\n" +
		"\nbasis fails 3 check(s) everything-client passes:\n\n" +
		"- `auth/*` (2 checks), in the baseline: no sign-in yet\n" +
		"- `tools/z` (failure), in the baseline: on purpose\n" +
		"\nThe client baseline lists checks basis no longer fails; remove them: gone/*\n"
	if diff := cmp.Diff(wantReport, report); diff != "" {
		t.Errorf("clientReport (-want +got):\n%s", diff)
	}
}

// The checked-in client baseline reads.
func TestCheckedInClientBaselineReads(t *testing.T) {
	b, err := readBaseline(filepath.Join("..", "..", "conformance", "client-baseline.yml"), []string{clientMode})
	if err != nil {
		t.Fatal(err)
	}
	if len(b[clientMode]) == 0 {
		t.Error("the client baseline lists nothing")
	}
}
