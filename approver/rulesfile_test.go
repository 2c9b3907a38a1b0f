package approver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/google/go-cmp/cmp"
)

func TestLoadRulesMissingFileIsNoRules(t *testing.T) {
	rules, err := approver.LoadRules(filepath.Join(t.TempDir(), "rules.json"), approver.ScopeOperator)
	if rules != nil || err != nil {
		t.Errorf("LoadRules of a missing file = %v, %v; want nil, nil", rules, err)
	}
	rules, err = approver.LoadWorkspaceRules(filepath.Join(t.TempDir(), ".basis", "rules.json"))
	if rules != nil || err != nil {
		t.Errorf("LoadWorkspaceRules of a missing file = %v, %v; want nil, nil", rules, err)
	}
}

func TestLoadRulesUnreadableFileIsAnError(t *testing.T) {
	dir := t.TempDir() // a directory where the file should be
	if _, err := approver.LoadRules(dir, approver.ScopeOperator); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("LoadRules of a directory = %v, want an error naming it", err)
	}
}

func TestLoadRulesSetsScopeAndNamesTheFile(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 1, "rules": [{"tool": "deploy", "allow": false, "reason": "CI deploys"}]}`)
	rules, err := approver.LoadRules(path, approver.ScopeWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]approver.Rule{{Tool: "deploy", Reason: "CI deploys", Scope: approver.ScopeWorkspace}}, rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	bad := writeFile(t, "bad.json", `{"schema": 1, "rules": [{"tool": "deploy"}]}`)
	_, err = approver.LoadRules(bad, approver.ScopeOperator)
	var re *approver.RulesError
	if !errors.As(err, &re) || re.File != bad || !strings.HasPrefix(err.Error(), "rules file "+bad+": rule 1 (tool deploy): ") {
		t.Errorf("error = %v, want a *RulesError naming %s", err, bad)
	}
}

func TestLoadWorkspaceRulesRefusesAllow(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 1, "rules": [
		{"tool": "spawn", "pattern": "*curl*", "allow": false},
		{"tool": "jenkins_job", "allow": true, "reason": "our own tool is fine"}
	]}`)
	rules, err := approver.LoadWorkspaceRules(path)
	if rules != nil || !errors.Is(err, approver.ErrWorkspaceAllow) || !errors.Is(err, approver.ErrInvalidRules) {
		t.Fatalf("LoadWorkspaceRules = %v, %v; want ErrWorkspaceAllow", rules, err)
	}
	want := "rules file " + path + ": rule 2 (tool jenkins_job): \"allow\": true is refused here: a workspace may only deny"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v\nwant it to start %q", err, want)
	}

	denyOnly := writeFile(t, "deny.json", `{"schema": 1, "rules": [{"tool": "spawn", "pattern": "*curl*", "allow": false}]}`)
	rules, err = approver.LoadWorkspaceRules(denyOnly)
	if err != nil || len(rules) != 1 || rules[0].Scope != approver.ScopeWorkspace {
		t.Errorf("deny-only workspace file = %v, %v", rules, err)
	}
}

func TestRulesFileAddListRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "basis", "rules.json")
	f := &approver.RulesFile{Path: path}
	if rules, err := f.List(); err != nil || len(rules) != 0 {
		t.Fatalf("List of a missing file = %v, %v", rules, err)
	}
	add := []approver.Rule{
		{Tool: "spawn", Command: []string{"go", "test", "*"}, Allow: true, Reason: "tests && vet are fine"},
		{Tool: "spawn", Pattern: `*"body":"curl *`, Reason: "no <downloads>"},
		// The scope is not stored.
		{Tool: "deploy", Scope: approver.ScopeSession},
		// Already there: not added twice.
		{Tool: "spawn", Command: []string{"go", "test", "*"}, Allow: true, Reason: "tests && vet are fine"},
	}
	for _, r := range add {
		if err := f.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rules.golden.json", data) // the same file FormatRules writes
	rules, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []approver.Rule{add[0], add[1], {Tool: "deploy"}}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	removed, err := f.Remove(func(_ int, r approver.Rule) bool { return r.Tool == "nothing" })
	if err != nil || removed != 0 {
		t.Errorf("Remove of nothing = %d, %v", removed, err)
	}
	removed, err = f.Remove(func(i int, r approver.Rule) bool { return i == 0 || r.Tool == "deploy" })
	if err != nil || removed != 2 {
		t.Errorf("Remove = %d, %v; want 2", removed, err)
	}
	rules, _ = f.List()
	if diff := cmp.Diff([]approver.Rule{add[1]}, rules); diff != "" {
		t.Errorf("after Remove (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"rules.json", "rules.json.lock"}, names); diff != "" {
		t.Errorf("files beside the rules file (-want +got):\n%s", diff)
	}
}

func TestRulesFileRefusesWhatItCannotStore(t *testing.T) {
	f := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	if err := f.Add(approver.Rule{Tool: "spawn", Subject: `{"a":1}`, Allow: true}); !errors.Is(err, approver.ErrInvalidRules) {
		t.Errorf("Add of an exact-subject rule = %v", err)
	}
	if err := f.Add(approver.Rule{Tool: "bad tool"}); !errors.Is(err, approver.ErrInvalidRules) {
		t.Errorf("Add of an invalid rule = %v", err)
	}
	if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused rule created the file: %v", err)
	}
	if err := (&approver.RulesFile{}).Add(approver.Rule{Tool: "x"}); err == nil {
		t.Error("Add with an empty Path succeeded")
	}
}

func TestRulesFileKeepsAFileItCannotRead(t *testing.T) {
	const broken = `{"schema": 1, "rules": [{"tool": "deploy"}]}`
	path := writeFile(t, "rules.json", broken)
	f := &approver.RulesFile{Path: path}
	if err := f.Add(approver.Rule{Tool: "spawn", Allow: true}); !errors.Is(err, approver.ErrInvalidRules) {
		t.Errorf("Add to a broken file = %v, want its parse error", err)
	}
	if n, err := f.Remove(func(int, approver.Rule) bool { return true }); err == nil || n != 0 {
		t.Errorf("Remove from a broken file = %d, %v", n, err)
	}
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Errorf("the broken file was rewritten: %s", data)
	}
}

// TestRulesFileConcurrentProcesses races two real processes, each adding
// 100 rules one at a time; every rule must survive.
func TestRulesFileConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	for _, prefix := range []string{"first_", "second_"} {
		spec, _ := json.Marshal(map[string]any{"Path": path, "Prefix": prefix, "N": 100})
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	for _, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	rules, err := (&approver.RulesFile{Path: path}).List()
	if err != nil {
		t.Fatal(err)
	}
	checkAllPresent(t, rules, map[string]int{"first_": 100, "second_": 100})
}

// TestRulesFileConcurrentGoroutines does the same within one process:
// flock is per open file, so goroutines exclude each other too.
func TestRulesFileConcurrentGoroutines(t *testing.T) {
	f := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := f.Add(approver.Rule{Tool: fmt.Sprintf("g%d_%d", g, i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rules, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	checkAllPresent(t, rules, map[string]int{"g0_": 25, "g1_": 25, "g2_": 25, "g3_": 25})
}

func checkAllPresent(t *testing.T, rules []approver.Rule, want map[string]int) {
	t.Helper()
	seen := make(map[string]bool)
	for _, r := range rules {
		seen[r.Tool] = true
	}
	total := 0
	for prefix, n := range want {
		total += n
		for i := range n {
			if name := fmt.Sprint(prefix, i); !seen[name] {
				t.Errorf("rule for %s is missing", name)
			}
		}
	}
	if len(rules) != total {
		t.Errorf("%d rules in the file, want %d", len(rules), total)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
