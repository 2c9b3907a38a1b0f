//go:build unix

package approver_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// update rewrites the golden files under testdata/ instead of comparing.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// helperEnv, when set, turns the test binary into a helper process: it adds
// rules to a rules file and exits, so the tests can race two real processes.
const helperEnv = "APPROVER_TEST_ADD_RULES"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(addRulesHelper(spec))
	}
	os.Exit(m.Run())
}

// addRulesHelper adds N rules, one at a time, for tools named PREFIX0,
// PREFIX1, ...; spec is JSON: {"Path": ..., "Prefix": ..., "N": ...}.
func addRulesHelper(spec string) int {
	var args struct {
		Path, Prefix string
		N            int
	}
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	f := &approver.RulesFile{Path: args.Path}
	for i := range args.N {
		r := approver.Rule{Tool: args.Prefix + strconv.Itoa(i), Source: repoManifest, Decision: approver.RuleAllow, Reason: "added by " + args.Prefix}
		if _, err := f.Add(r); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
	}
	return 0
}

// checkGolden compares got with testdata/name, or rewrites it under
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from what the code produces (go test -update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// subject checks that a literal subject written in a test is already in
// canonical form, so tests match what tools really produce.
func subject(t testing.TB, literal string) json.RawMessage {
	t.Helper()
	canon, err := contract.CanonicalJSON(json.RawMessage(literal))
	if err != nil {
		t.Fatalf("subject %s: %v", literal, err)
	}
	if string(canon) != literal {
		t.Fatalf("subject is not canonical:\n%s\nwant\n%s", literal, canon)
	}
	return canon
}

// Sources the tests' tools come from.
const (
	repoManifest  = "/repo/.basis/tools.json"
	otherManifest = "/other/.basis/tools.json"
)

// sourceOf is where a test's tool comes from: builtin for spawn, the
// repository's manifest for the rest.
func sourceOf(tool string) string {
	if tool == "spawn" {
		return approver.BuiltinSource
	}
	return repoManifest
}

// request is the gate's request for a call of tool from sourceOf(tool).
func request(tool string, call contract.Call, p contract.Preview) approver.Request {
	return approver.Request{CallID: call.ID, Tool: tool, Source: sourceOf(tool), Preview: p, Input: call.Input}
}

// bound binds rules without a source to sourceOf their tool, as rules
// written by "basis rules add --tool" are.
func bound(rules ...approver.Rule) []approver.Rule {
	out := make([]approver.Rule, len(rules))
	for i, r := range rules {
		if r.Source == "" && r.Scope != approver.ScopeWorkspace {
			r.Source = sourceOf(r.Tool)
		}
		out[i] = r
	}
	return out
}

// explicit spells out what zero values in rules mean (ScopeOperator,
// RuleDeny), as loaders and the gate write them.
func explicit(rules []approver.Rule) []approver.Rule {
	out := slices.Clone(rules)
	for i := range out {
		if out[i].Scope == "" {
			out[i].Scope = approver.ScopeOperator
		}
		if out[i].Decision == "" {
			out[i].Decision = approver.RuleDeny
		}
	}
	return out
}
