package trampoline

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSourcesAreEmbedded: every non-test Go file of the package is in
// the digest, so that a change to any of them gives another Revision (a
// file added under a suffix the embed pattern misses would not).
func TestSourcesAreEmbedded(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			want = append(want, n)
		}
	}
	embedded, err := sources.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range embedded {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("embedded %v, the package's sources are %v: widen the go:embed line of revision_linux.go", got, want)
	}
}

// TestAnotherRevisionIsRefused: a trampoline asked by another build
// (a helper older than its basis) runs nothing, probes included.
func TestAnotherRevisionIsRefused(t *testing.T) {
	for _, tc := range []struct {
		revision string
		ok       bool
	}{
		{Revision(), true},
		{"", false},
		{Revision()[:23] + "x", false},
	} {
		encoded, err := json.Marshal(Spec{Version: Version, Revision: tc.revision, Probe: true})
		if err != nil {
			t.Fatal(err)
		}
		err = trampoline(string(encoded), nil)
		if (err == nil) != tc.ok {
			t.Errorf("revision %q: %v, want success %v", tc.revision, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "another build") {
			t.Errorf("revision %q: %v does not say the helper is another build", tc.revision, err)
		}
	}
}
