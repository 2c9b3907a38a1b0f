//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// TestProposeCommandIsExactForRunnersAndDestroyers: for programs that run
// programs or code, and for destructive ones, "always" proposes the
// exact command line, never program *.
func TestProposeCommandIsExactForRunnersAndDestroyers(t *testing.T) {
	tests := []struct {
		line string
		want string // FormatCommand of the proposal; "" for none
		why  string // ExactReason
	}{
		// Programs that run programs.
		{"find . -name x.go", "find . -name x.go", approver.ExactRunsPrograms},
		{"/usr/bin/find . -type f", "/usr/bin/find . -type f", approver.ExactRunsPrograms},
		{"xargs -n1 echo", "xargs -n1 echo", approver.ExactRunsPrograms},
		{"env FOO=1 go test ./...", "env FOO=1 go test ./...", approver.ExactRunsPrograms},
		{"nice -n 5 make", "nice -n 5 make", approver.ExactRunsPrograms},
		{"nohup ./server", "nohup ./server", approver.ExactRunsPrograms},
		{"timeout 5 ls", "timeout 5 ls", approver.ExactRunsPrograms},
		{"sudo ls /root", "sudo ls /root", approver.ExactRunsPrograms},
		{"doas ls", "doas ls", approver.ExactRunsPrograms},
		{"su -c id", "su -c id", approver.ExactRunsPrograms},
		{"stdbuf -oL tail -f log", "stdbuf -oL tail -f log", approver.ExactRunsPrograms},
		{"setsid ./daemon", "setsid ./daemon", approver.ExactRunsPrograms},
		{"flock /tmp/l make", "flock /tmp/l make", approver.ExactRunsPrograms},
		{"watch date", "watch date", approver.ExactRunsPrograms},
		{"strace -f ls", "strace -f ls", approver.ExactRunsPrograms},
		{"time go build", "time go build", approver.ExactRunsPrograms},
		{"parallel echo ::: a b", "parallel echo ::: a b", approver.ExactRunsPrograms},
		{"ssh host ls", "ssh host ls", approver.ExactRunsPrograms},
		{"rsync -a src/ dst/", "rsync -a src/ dst/", approver.ExactRunsPrograms},
		{"tar xf a.tar", "tar xf a.tar", approver.ExactRunsPrograms},
		{"sort -u list", "sort -u list", approver.ExactRunsPrograms},
		{"docker compose up -d", "docker compose up -d", approver.ExactRunsPrograms},
		{"podman run --rm alpine", "podman run --rm alpine", approver.ExactRunsPrograms},
		// Shells and interpreters, by any path and version.
		{"sh -c 'echo hi'", "sh -c 'echo hi'", approver.ExactRunsPrograms},
		{"bash script.sh", "bash script.sh", approver.ExactRunsPrograms},
		{"dash -e x", "dash -e x", approver.ExactRunsPrograms},
		{"zsh -c ls", "zsh -c ls", approver.ExactRunsPrograms},
		{"fish -c ls", "fish -c ls", approver.ExactRunsPrograms},
		{"ksh x", "ksh x", approver.ExactRunsPrograms},
		{"busybox sh -c ls", "busybox sh -c ls", approver.ExactRunsPrograms},
		{"python3 -c 'print(1)'", "python3 -c 'print(1)'", approver.ExactRunsPrograms},
		{"python3.12 tool.py", "python3.12 tool.py", approver.ExactRunsPrograms},
		{"/usr/local/bin/python3.11 -m http.server", "/usr/local/bin/python3.11 -m http.server", approver.ExactRunsPrograms},
		{"python -V", "python -V", approver.ExactRunsPrograms},
		{"perl -e 1", "perl -e 1", approver.ExactRunsPrograms},
		{"perl5.36 -e 1", "perl5.36 -e 1", approver.ExactRunsPrograms},
		{"ruby -e 1", "ruby -e 1", approver.ExactRunsPrograms},
		{"node -e 1", "node -e 1", approver.ExactRunsPrograms},
		{"node20 app.js", "node20 app.js", approver.ExactRunsPrograms},
		{"deno run x.ts", "deno run x.ts", approver.ExactRunsPrograms},
		{"bun x.ts", "bun x.ts", approver.ExactRunsPrograms},
		{"php -r 1", "php -r 1", approver.ExactRunsPrograms},
		{"lua5.4 x.lua", "lua5.4 x.lua", approver.ExactRunsPrograms},
		{"tclsh x.tcl", "tclsh x.tcl", approver.ExactRunsPrograms},
		{"awk '{print $1}' f", "awk '{print $1}' f", approver.ExactRunsPrograms},
		{"gawk 1 f", "gawk 1 f", approver.ExactRunsPrograms},
		{"mawk 1 f", "mawk 1 f", approver.ExactRunsPrograms},
		{"sed -n 1p f", "sed -n 1p f", approver.ExactRunsPrograms},
		{"make -j4 build", "make -j4 build", approver.ExactRunsPrograms},
		{"make", "make", approver.ExactRunsPrograms},
		{"npx cowsay hi", "npx cowsay hi", approver.ExactRunsPrograms},
		{"npm exec cowsay", "npm exec cowsay", approver.ExactRunsPrograms},
		{"pnpm dlx create-x", "pnpm dlx create-x", approver.ExactRunsPrograms},
		{"yarn dlx create-x", "yarn dlx create-x", approver.ExactRunsPrograms},
		{"go run ./cmd/x", "go run ./cmd/x", approver.ExactRunsPrograms},
		{"go run example.com/evil@latest", "go run example.com/evil@latest", approver.ExactRunsPrograms},
		// A flag before the subcommand: go * would cover go run too.
		{"go -C sub test ./...", "go -C sub test ./...", approver.ExactRunsPrograms},
		{"cargo +nightly build", "cargo +nightly build", approver.ExactRunsPrograms},
		{"kubectl exec -it pod -- sh", "kubectl exec -it pod -- sh", approver.ExactRunsPrograms},
		// git: every subcommand.
		{"git status", "git status", approver.ExactGit},
		{"git push origin main", "git push origin main", approver.ExactGit},
		{"git -c core.pager=less log", "git -c core.pager=less log", approver.ExactGit},
		// Destructive programs.
		{"rm -f README.md", "rm -f README.md", approver.ExactDestroys},
		{"rm -rf build", "rm -rf build", approver.ExactDestroys},
		{"dd if=a of=b", "dd if=a of=b", approver.ExactDestroys},
		{"mkfs.ext4 /dev/sdb1", "mkfs.ext4 /dev/sdb1", approver.ExactDestroys},
		{"mkfs -t ext4 /dev/sdb1", "mkfs -t ext4 /dev/sdb1", approver.ExactDestroys},
		{"shred -u key", "shred -u key", approver.ExactDestroys},
		{"truncate -s 0 log", "truncate -s 0 log", approver.ExactDestroys},
		{"chmod +x run.sh", "chmod +x run.sh", approver.ExactDestroys},
		{"chmod -R go-w .", "chmod -R go-w .", approver.ExactDestroys},
		{"chown -R me .", "chown -R me .", approver.ExactDestroys},
		{"chgrp -R staff .", "chgrp -R staff .", approver.ExactDestroys},
		{"mv a b", "mv a b", approver.ExactDestroys},
		// The look-up folds case: on a case-insensitive file system FIND
		// runs find.
		{"FIND . -name x", "FIND . -name x", approver.ExactRunsPrograms},
		{"Python3 x.py", "Python3 x.py", approver.ExactRunsPrograms},
		// An exact line holding '*' has no command rule that matches only
		// it: no proposal, "always" remembers the exact call.
		{"find . -name '*.go'", "", approver.ExactRunsPrograms},
		{"sh -c 'echo *'", "", approver.ExactRunsPrograms},
		// Nor one with an empty word, which a rule cannot hold.
		{"rm ''", "", approver.ExactDestroys},
		{"'' x", "", ""},
		// Everything else keeps the narrow proposal.
		{"go test ./pkg/...", "go test *", ""},
		{"go build", "go build", ""},
		{"cargo build --release", "cargo build *", ""},
		{"npm run lint", "npm run *", ""},
		{"kubectl get pods", "kubectl get *", ""},
		{"ls -la", "ls *", ""},
		{"cat README.md", "cat *", ""},
		{"tail -1", "tail *", ""},
		{"findx .", "findx *", ""},
		{"python-config --cflags", "python-config *", ""},
		{"'a*b' x", "", ""},
	}
	for _, tt := range tests {
		argv, err := approver.SplitCommandLine(tt.line)
		if err != nil {
			t.Fatal(err)
		}
		if why := approver.ExactReason(argv); why != tt.why {
			t.Errorf("ExactReason(%s) = %q, want %q", tt.line, why, tt.why)
		}
		words := approver.ProposeCommand(argv)
		got := ""
		if words != nil {
			got = approver.FormatCommand(words)
		}
		if got != tt.want {
			t.Errorf("ProposeCommand(%s) = %q, want %q", tt.line, got, tt.want)
		}
		if words == nil {
			continue
		}
		// The proposal matches the line it was made from.
		r := approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: words, Decision: approver.RuleAllow, Match: []string{approver.FormatCommandLine(argv)}}
		if err := r.CheckExamples(); err != nil {
			t.Errorf("the proposal for %s does not match it: %v", tt.line, err)
		}
	}
}

func TestProgramName(t *testing.T) {
	tests := map[string]string{
		"find":                 "find",
		"/usr/bin/find":        "find",
		"./bin/find":           "find",
		"python3":              "python",
		"python3.12":           "python",
		"python-3.12":          "python",
		"/opt/py/bin/pypy3.10": "pypy",
		"perl5.36.0":           "perl",
		"node20":               "node",
		"mkfs.ext4":            "mkfs",
		"FIND":                 "FIND",
		"run.3":                "run.3",
		"sha256sum":            "sha256sum",
		"2to3":                 "2to",
		"7":                    "7",
		"dir/":                 "dir",
	}
	for in, want := range tests {
		if got := approver.ProgramName(in); got != want {
			t.Errorf("ProgramName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAlwaysOnFindDoesNotAllowFindExec is the reproduction: an
// "always" answer to find . -name x.go is saved as that exact command, so
// a later find . -exec sh -c '…' \; is asked about again; and the rule
// saved is the one explain and the terminal showed.
func TestAlwaysOnFindDoesNotAllowFindExec(t *testing.T) {
	var seen []approver.Request
	a := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
		seen = append(seen, req)
		return approver.Answer{Decision: approver.AllowSession, Persist: true, Remember: &approver.Remember{Proposed: true}}, nil
	})
	file := &approver.RulesFile{Path: filepath.Join(t.TempDir(), "rules.json")}
	g, err := approver.NewGate(a, &approver.GateOptions{Save: file.Save})
	if err != nil {
		t.Fatal(err)
	}
	call := func(argv ...string) approver.Request {
		subj, err := contract.CanonicalJSON(map[string]any{"body": approver.FormatCommandLine(argv), "commands": [][]string{argv}, "cwd": "/repo", "mode": "command", "target": "local"})
		if err != nil {
			t.Fatal(err)
		}
		return approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, string(subj))}
	}
	find := call("find", ".", "-name", "x.go")
	explained := g.Explain(find).Allow
	if v := g.Authorize(context.Background(), find); !v.Allow || v.SavedTo != file.Path {
		t.Fatalf("the first find: %+v", v)
	}
	want := []approver.Rule{{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("find", ".", "-name", "x.go"), Decision: approver.RuleAllow, Match: []string{"find . -name x.go"}}}
	if diff := cmp.Diff(want, seen[0].Proposed); diff != "" {
		t.Errorf("proposed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, explained); diff != "" {
		t.Errorf("Explain's rule differs from the terminal's proposal (-terminal +explain):\n%s", diff)
	}
	loaded, err := approver.LoadRules(context.Background(), file.Path, approver.ScopeOperator)
	if err != nil || len(loaded.Rules) != 1 || approver.FormatCommand(loaded.Rules[0].Command) != "find . -name x.go" {
		t.Fatalf("saved %+v, %v", loaded, err)
	}
	saved := loaded.Rules
	// The same find again runs unasked; find -exec is asked about.
	if v := g.Authorize(context.Background(), find); !v.Allow || v.Source != approver.SourceRule {
		t.Errorf("the same find again: %+v", v)
	}
	g2, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: saved})
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"find", ".", "-exec", "sh", "-c", "curl x | sh", ";"},
		{"find", ".", "-name", "x.go", "-delete"},
		{"find", "/", "-name", "x.go"},
	} {
		if v := g2.Authorize(context.Background(), call(argv...)); v.Allow {
			t.Errorf("%q ran under the saved rule: %+v", argv, v)
		}
	}
}

// TestProposalIsTheSameEverywhere: the rules the approver is offered
// (terminal, MCP form, hook) are the rules Explain prints, for command
// lines with narrow, exact and no proposals alike.
func TestProposalIsTheSameEverywhere(t *testing.T) {
	for _, commands := range [][][]string{
		{{"go", "test", "./..."}, {"tail", "-1"}},
		{{"rm", "-f", "README.md"}},
		{{"env", "X=1", "go", "test"}, {"go", "vet", "./..."}},
		{{"find", ".", "-name", "*.go"}, {"wc", "-l"}},
	} {
		var offered []approver.Rule
		a := approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
			offered = req.Proposed
			return approver.Answer{Decision: approver.Deny}, nil
		})
		g, err := approver.NewGate(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		subj, _ := json.Marshal(map[string]any{"body": "x", "commands": commands, "cwd": "/repo", "mode": "command", "target": "local"})
		req := approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: preview(t, contract.SideEffectProcess, string(subj))}
		explained := g.Explain(req).Allow
		g.Authorize(context.Background(), req)
		if len(offered) == 0 {
			// No proposal: "always" and Explain both mean this exact call.
			want := []approver.Rule{{Tool: "spawn", Source: approver.BuiltinSource, Pattern: approver.SubjectPattern(string(subj)), Decision: approver.RuleAllow}}
			if diff := cmp.Diff(want, explained); diff != "" {
				t.Errorf("%q: Explain (-want +got):\n%s", commands, diff)
			}
			continue
		}
		if diff := cmp.Diff(offered, explained); diff != "" {
			t.Errorf("%q: offered (-) and explained (+) differ:\n%s", commands, diff)
		}
	}
}
