//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

func TestLoadRulesMissingFileIsNoRules(t *testing.T) {
	for _, scope := range []approver.Scope{approver.ScopeOperator, approver.ScopeWorkspace, approver.ScopeSystem} {
		got, err := approver.LoadRules(ctx, filepath.Join(t.TempDir(), "rules.json"), scope)
		if diff := cmp.Diff(&approver.Rules{}, got); err != nil || diff != "" {
			t.Errorf("%s: LoadRules of a missing file = %v (-want +got):\n%s", scope, err, diff)
		}
	}
}

// TestLoadRulesRefusesWhatIsNotARulesFile: a FIFO must not hang, /dev/zero
// must not grow the process, a huge file is refused before it is read, and
// each error names the file.
func TestLoadRulesRefusesWhatIsNotARulesFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, configfile.DefaultLimit+1); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	regular := writeFile(t, "rules.json", `{"schema": 1, "rules": []}`)
	for _, tt := range []struct {
		name, path string
		ctx        context.Context
		want       error
	}{
		{"a directory", dir, ctx, configfile.ErrNotRegular},
		{"a FIFO", fifo, ctx, configfile.ErrNotRegular},
		{"a link to /dev/zero", zero, ctx, configfile.ErrNotRegular},
		{"a file over the size bound", huge, ctx, configfile.ErrTooLarge},
		{"a cancelled read", regular, cancelled, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, scope := range []approver.Scope{approver.ScopeOperator, approver.ScopeWorkspace} {
				_, err := approver.LoadRules(tt.ctx, tt.path, scope)
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.path) {
					t.Errorf("%s: LoadRules = %v; want %v naming %s", scope, err, tt.want, tt.path)
				}
			}
			if _, err := (&approver.RulesFile{Path: tt.path}).Add(approver.Rule{Tool: "x", Source: repoManifest}); !errors.Is(err, tt.want) && tt.ctx == ctx {
				t.Errorf("Add = %v; want %v", err, tt.want)
			}
		})
	}
}

func TestLoadRulesSetsScopeFileAndNumber(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 1, "rules": [
  {"tool": "spawn", "allow": false},
  {"tool": "deploy", "allow": false, "reason": "CI deploys"}
]}`)
	loaded, err := approver.LoadRules(ctx, path, approver.ScopeWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	rules := loaded.Rules
	want := []approver.Rule{
		{Tool: "spawn", Scope: approver.ScopeWorkspace, File: path, Number: 1},
		{Tool: "deploy", Reason: "CI deploys", Scope: approver.ScopeWorkspace, File: path, Number: 2},
	}
	if diff := cmp.Diff(explicit(want), rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	bad := writeFile(t, "bad.json", "{\"schema\": 1, \"rules\": [\n  {\"tool\": \"deploy\"}]}")
	_, err = approver.LoadRules(ctx, bad, approver.ScopeOperator)
	var re *configfile.Error
	if !errors.As(err, &re) || re.File != bad || err.Error() != bad+`:2:3: rule 1 (tool deploy): "allow" is missing; say true to allow or false to deny` {
		t.Errorf("error = %v, want a *RulesError naming %s at 2:3", err, bad)
	}
}

// TestLoadRulesUnboundRulesMatchNothing: rules written before sources
// (no "source") load, are reported with the command that rebinds them, and
// never match — an approval given in one repository must not run another
// repository's tool of the same name.
func TestLoadRulesUnboundRulesMatchNothing(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 1, "rules": [
  {"tool": "word_count", "allow": true},
  {"tool": "spawn", "command": ["go", "test", "*"], "allow": true},
  {"tool": "fmt_check", "source": "/home/me/.config/basis/tools.json", "allow": true}
]}`)
	loaded, err := approver.LoadRules(ctx, path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	rules, warnings := loaded.Rules, loaded.Warnings
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	want := []string{
		path + `: rule 1 (allow word_count): it has no "source", so it is bound to nothing and matches nothing (it was written before rules were bound to the tool they were written for); to rebind it: basis rules add --tool word_count --allow && basis rules remove 1`,
		path + `: rule 2 (allow spawn command go test *): it has no "source", so it is bound to nothing and matches nothing (it was written before rules were bound to the tool they were written for); to rebind it: basis rules add --tool spawn --source builtin --command 'go test *' --allow && basis rules remove 2`,
		path + `: rule 3 (allow fmt_check): it records no "definition" of the tool it allows, so it matches no declared, MCP or spawn tool (it was written before an approval covered what the tool runs); look at the tool as it is now (basis explain fmt_check) before you allow it again; to rebind it: basis rules add --tool fmt_check --source /home/me/.config/basis/tools.json --allow`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	g, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, source, subject string
		allow                 bool
	}{
		{"word_count", repoManifest, jenkinsTrigger, false},
		{"word_count", otherManifest, jenkinsTrigger, false},
		{"word_count", "", jenkinsTrigger, false},
		{"spawn", approver.BuiltinSource, goTestRun, false},
		// The workspace's own fmt_check does not inherit the global one's
		// rule; the global one matches only a request with no definition
		// (definition_test.go has the rest).
		{"fmt_check", repoManifest, jenkinsTrigger, false},
		{"fmt_check", "/home/me/.config/basis/tools.json", jenkinsTrigger, true},
	} {
		v := g.Authorize(ctx, approver.Request{Tool: tt.tool, Source: tt.source, Preview: preview(t, contract.SideEffectProcess, tt.subject)})
		if v.Allow != tt.allow {
			t.Errorf("%s from %q: verdict %+v, want allow=%v", tt.tool, tt.source, v, tt.allow)
		}
	}
}

func TestLoadRulesWorkspaceRefusesAllow(t *testing.T) {
	path := writeFile(t, "rules.json", `{"schema": 1, "rules": [
		{"tool": "spawn", "pattern": "*curl*", "allow": false},
		{"tool": "jenkins_job", "allow": true, "reason": "our own tool is fine"},
		{"tool": "spawn", "source": "*", "allow": true}
	]}`)
	loaded, err := approver.LoadRules(ctx, path, approver.ScopeWorkspace)
	if loaded != nil || !errors.As(err, new(*configfile.Error)) {
		t.Fatalf("LoadRules = %v, %v; want every allow rule refused", loaded, err)
	}
	for _, want := range []string{
		path + ":3:3: rule 2 (tool jenkins_job): an allow rule is refused here: a workspace may only deny or ask",
		path + ":4:3: rule 3 (tool spawn): an allow rule is refused here",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v\nwant it to hold %q", err, want)
		}
	}

	denyOnly := writeFile(t, "deny.json", `{"schema": 2, "rules": [{"tool": "spawn", "pattern": "*curl*", "decision": "deny"}, {"tool": "spawn", "command": ["git", "push", "*"], "decision": "ask"}]}`)
	loaded, err = approver.LoadRules(ctx, denyOnly, approver.ScopeWorkspace)
	if err != nil || len(loaded.Rules) != 2 || loaded.Rules[0].Scope != approver.ScopeWorkspace || loaded.Rules[1].Decision != approver.RuleAsk {
		t.Errorf("deny-only workspace file = %+v, %v", loaded, err)
	}
}

// TestLoadRulesLooseOperatorFile: allow rules in an operator file others
// can write are refused, saying how to fix it; deny rules are fine.
func TestLoadRulesLooseOperatorFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mode  os.FileMode
		rules string
		loose bool
	}{
		{"owner only, allow", 0o600, `{"tool": "x", "source": "*", "allow": true}`, false},
		{"world-readable, allow", 0o644, `{"tool": "x", "source": "*", "allow": true}`, false},
		{"group-writable, allow", 0o660, `{"tool": "x", "source": "*", "allow": true}`, true},
		{"world-writable, allow", 0o606, `{"tool": "x", "source": "*", "allow": true}`, true},
		{"world-writable, deny only", 0o666, `{"tool": "x", "allow": false}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "rules.json", `{"schema": 1, "rules": [`+tt.rules+`]}`)
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := approver.LoadRules(ctx, path, approver.ScopeOperator)
			if !tt.loose {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := fmt.Sprintf("%s: the file can be written by its group or by others (mode %04o), so its allow rules are refused: whoever can write it could approve any tool; fix it with: chmod go-w %s", path, tt.mode, path)
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant %s", err, want)
			}
			f := &approver.RulesFile{Path: path}
			if _, err := f.Add(approver.Rule{Tool: "y", Source: repoManifest, Decision: approver.RuleAllow}); err == nil || !strings.Contains(err.Error(), "its allow rules are refused") {
				t.Errorf("Add to a loose file = %v", err)
			}
		})
	}
}

func TestRulesFileAddListRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "basis", "rules.json")
	f := &approver.RulesFile{Path: path}
	if loaded, err := approver.LoadRules(ctx, path, approver.ScopeOperator); err != nil || len(loaded.Rules) != 0 {
		t.Fatalf("LoadRules of a missing file = %+v, %v", loaded, err)
	}
	add := []approver.Rule{
		{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow, Reason: "tests && vet are fine"},
		{Tool: "spawn", Source: approver.BuiltinSource, Pattern: `*"body":"curl *`, Reason: "no <downloads>"},
		// The scope is not stored.
		{Tool: "deploy", Source: repoManifest, Scope: approver.ScopeSession},
		{Tool: "deploy", Source: approver.AnySource},
	}
	for _, r := range add {
		if added, err := f.Add(r); err != nil || !added {
			t.Fatalf("Add = %v, %v", added, err)
		}
	}
	// Already there, whatever its reason: reported, not added twice.
	again := add[0]
	again.Reason = "other words"
	if added, err := f.Add(again); err != nil || added {
		t.Errorf("Add of a rule already there = %v, %v; want false, nil", added, err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a new rules file: %v, %v; want mode 0600", info, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rules.golden.json", data) // the same file FormatRules writes
	loaded, err := approver.LoadRules(ctx, path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	rules := loaded.Rules
	numbered := func(n int, r approver.Rule) approver.Rule {
		r.Scope, r.File, r.Number = approver.ScopeOperator, path, n
		return r
	}
	want := []approver.Rule{numbered(1, add[0]), numbered(2, add[1]), numbered(3, add[2]), numbered(4, add[3])}
	if diff := cmp.Diff(explicit(want), rules); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	removed, err := f.Remove(matchTool("nothing"))
	if err != nil || len(removed) != 0 {
		t.Errorf("Remove of nothing = %v, %v", removed, err)
	}
	// A filter on the tool alone takes its command and pattern rules too.
	removed, err = f.Remove(matchTool("spawn"))
	if diff := cmp.Diff(explicit(want[:2]), removed); err != nil || diff != "" {
		t.Errorf("Remove of spawn's rules: %v (-want +got):\n%s", err, diff)
	}
	// By the number List shows.
	removed, err = f.Remove(matchNumber(2))
	if diff := cmp.Diff(explicit([]approver.Rule{numbered(2, add[3])}), removed); err != nil || diff != "" {
		t.Errorf("Remove by number: %v (-want +got):\n%s", err, diff)
	}
	loaded, err = approver.LoadRules(ctx, path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	rules = loaded.Rules
	if diff := cmp.Diff(explicit([]approver.Rule{numbered(1, add[2])}), rules); diff != "" {
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

// TestRulesFileWritesThroughASymlink: a rules file kept as a link (a
// dotfiles repository) stays a link, and its target keeps its mode.
func TestRulesFileWritesThroughASymlink(t *testing.T) {
	dotfiles := t.TempDir()
	target := filepath.Join(dotfiles, "basis-rules.json")
	if err := os.WriteFile(target, []byte(`{"schema": 1, "rules": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "rules.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f := &approver.RulesFile{Path: link}
	if _, err := f.Add(approver.Rule{Tool: "deploy", Source: repoManifest}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", info, err)
	}
	if info, err := os.Stat(target); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the target: %v, %v; want mode 0600 kept", info, err)
	}
	loaded, err := approver.LoadRules(ctx, target, approver.ScopeOperator)
	if err != nil || len(loaded.Rules) != 1 || loaded.Rules[0].Tool != "deploy" {
		t.Errorf("the target holds %+v, %v", loaded, err)
	}
}

func TestRulesFileRefusesWhatItCannotStore(t *testing.T) {
	f := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	if _, err := f.Add(approver.Rule{Tool: "spawn", Subject: `{"a":1}`, Decision: approver.RuleAllow}); !errors.As(err, new(*configfile.Error)) {
		t.Errorf("Add of an exact-subject rule = %v", err)
	}
	if _, err := f.Add(approver.Rule{Tool: "bad tool"}); !errors.As(err, new(*configfile.Error)) {
		t.Errorf("Add of an invalid rule = %v", err)
	}
	if _, err := f.Add(approver.Rule{Tool: "x", Source: "relative/tools.json"}); !errors.As(err, new(*configfile.Error)) {
		t.Errorf("Add of a rule with a relative source = %v", err)
	}
	if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused rule created the file: %v", err)
	}
	if _, err := (&approver.RulesFile{}).Add(approver.Rule{Tool: "x"}); err == nil {
		t.Error("Add with an empty Path succeeded")
	}
}

func TestRulesFileKeepsAFileItCannotRead(t *testing.T) {
	const broken = `{"schema": 1, "rules": [{"tool": "deploy"}]}`
	path := writeFile(t, "rules.json", broken)
	f := &approver.RulesFile{Path: path}
	if _, err := f.Add(approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Decision: approver.RuleAllow}); !errors.As(err, new(*configfile.Error)) {
		t.Errorf("Add to a broken file = %v, want its parse error", err)
	}
	if removed, err := f.Remove(func(int, approver.Rule) bool { return true }); err == nil || len(removed) != 0 {
		t.Errorf("Remove from a broken file = %v, %v", removed, err)
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
	loaded, err := approver.LoadRules(ctx, path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	checkAllPresent(t, loaded.Rules, map[string]int{"first_": 100, "second_": 100})
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
				if _, err := f.Add(approver.Rule{Tool: fmt.Sprintf("g%d_%d", g, i), Source: repoManifest}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	loaded, err := approver.LoadRules(ctx, f.Path, approver.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	checkAllPresent(t, loaded.Rules, map[string]int{"g0_": 25, "g1_": 25, "g2_": 25, "g3_": 25})
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

// matchTool selects the rules of one tool, for RulesFile.Remove.
func matchTool(tool string) func(int, approver.Rule) bool {
	return func(_ int, r approver.Rule) bool { return r.Tool == tool }
}

// matchNumber selects the rule numbered n, for RulesFile.Remove.
func matchNumber(n int) func(int, approver.Rule) bool {
	return func(number int, _ approver.Rule) bool { return number == n }
}
